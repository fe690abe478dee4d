import { describe, expect, it } from 'vitest';
import { MetricCatalog } from '../../src/gate/metric-catalog.js';
import { dominates, paretoFront } from '../../src/explore/pareto.js';
import { RefusedError } from '../../src/explore/refused-error.js';
import { changedNothing, figuresOf, runSweep, sweepFile } from '../../src/explore/sweep.js';
import { SweepError } from '../../src/explore/sweep-error.js';
import { expandGrid, gridSize, MAX_POINTS, parseSweepParams, pointSets } from '../../src/explore/sweep-params.js';
import { heatmap, sweepHeatmap } from '../../src/report/heatmap.js';
import {
  SWEEP_SCHEMA,
  sweepCsv,
  sweepJson,
  type PointFigures,
  type SweepFile,
  type SweepParam,
} from '../../src/report/sweep-file.js';
import { paramLabels, sweepHeadline, sweepTable, sweepText } from '../../src/report/sweep-table.js';
import { fakeRun } from '../report/fixture.js';

/** The problems `parseSweepParams` reports for these flags (it must throw). */
function problems(flags: string[]): string[] {
  try {
    parseSweepParams(flags);
  } catch (e) {
    if (e instanceof SweepError) return e.problems;
    throw e;
  }
  throw new Error(`no problem with ${flags.join(' ')}`);
}

const ANSI = /\x1b\[[0-9;]*m/g;
const visible = (s: string): string => s.replace(ANSI, '');
const widest = (s: string): number =>
  Math.max(
    ...visible(s)
      .split('\n')
      .map((l) => [...l].length),
  );

function figures(goodput: number, amplification: number, p99Ms: number): PointFigures {
  return { goodput, amplification, p99Ms, successRate: 0.9, wastedTokens: 1000, shed: 0, recoveryMs: 2000 };
}

/**
 * A hand-made sweep over `params`: goodput rises along the first parameter and falls along the
 * second (`goodput = 10 + i − j`), amplification and p99 rise with the grid index.
 */
function makeSweep(
  params: SweepParam[],
  o: { metric?: string; higherIsBetter?: boolean; unit?: SweepFile['unit'] } = {},
): SweepFile {
  const grid = expandGrid(params);
  const points = grid.map((g, n) => {
    const f = figures(10 + g[0] - (g[1] ?? 0), 1 + n / 10, 1000 + 100 * n);
    return {
      values: g.map((k, j) => params[j].values[k]),
      figures: f,
      metric: o.metric === 'amplification' ? f.amplification : f.goodput,
    };
  });
  const front = paretoFront(points.map((p) => p.figures));
  return {
    schema: SWEEP_SCHEMA,
    scenario: 'brownout',
    variant: 'engine',
    seed: 1,
    params,
    metric: o.metric ?? 'goodput',
    higherIsBetter: o.higherIsBetter ?? true,
    unit: o.unit ?? 'rate',
    points: points.map((p, i) => ({ ...p, pareto: front[i] })),
    timing: { wallMs: 0, workers: 1 },
  };
}

const K = { path: 'engine.throttle.k', values: [1.1, 1.5, 2, 3] };
const RATIO = { path: 'engine.retryBudget.ratio', values: [0.05, 0.1, 0.2, 0.4] };

describe('parseSweepParams', () => {
  it('reads values as --set reads them: numbers, booleans, durations and words', () => {
    const [a, b, c] = parseSweepParams([
      'engine.throttle.k=1.1, 1.5,2',
      'engine.breaker=false,true',
      'layers[0].timeout=500ms,2s',
    ]);
    expect(a).toEqual({ path: 'engine.throttle.k', values: [1.1, 1.5, 2], texts: ['1.1', '1.5', '2'] });
    expect(b.values).toEqual([false, true]);
    expect(c.values).toEqual(['500ms', '2s']);
  });

  it('expands low:high:step ranges, numbers and durations, without float noise', () => {
    expect(parseSweepParams(['engine.throttle.k=1:3:0.5'])[0].values).toEqual([1, 1.5, 2, 2.5, 3]);
    expect(parseSweepParams(['engine.retryBudget.ratio=0.1:0.3:0.1'])[0].values).toEqual([0.1, 0.2, 0.3]);
    expect(parseSweepParams(['engine.throttle.k=1:2:0.4,5'])[0].values).toEqual([1, 1.4, 1.8, 5]);
    expect(parseSweepParams(['layers[0].timeout=100ms:1s:300ms'])[0].texts).toEqual(['100ms', '400ms', '700ms', '1s']);
  });

  it('names the flag and the value in every problem, and reports them all at once', () => {
    expect(problems(['engine.throttle.k'])).toEqual([
      '--param "engine.throttle.k": expected path=v1,v2,… like engine.throttle.k=1.5,2,3',
    ]);
    expect(problems(['=1,2'])[0]).toBe('--param "=1,2": expected path=value, the path is empty');
    expect(problems(['engine.throttle.k=1,,2'])).toEqual([
      '--param engine.throttle.k: empty value in "1,,2" (values are separated by commas)',
    ]);
    expect(problems(['engine.throttle.k=1,2,1.0'])).toEqual(['--param engine.throttle.k: 1.0 is given twice']);
    expect(problems(['engine.throttle.k=1:2:0.5,2'])).toEqual(['--param engine.throttle.k: 2 is given twice']);
    expect(problems(['engine.throttle.k=1,2', 'engine.throttle.k=3'])).toEqual([
      '--param engine.throttle.k is given twice: list all its values in one --param',
    ]);
    expect(problems(['engine.throttle.k=3:1:0.5'])).toEqual([
      '--param engine.throttle.k: range "3:1:0.5": it goes down: write low:high:step',
    ]);
    expect(problems(['engine.throttle.k=1:3:0'])).toEqual([
      '--param engine.throttle.k: range "1:3:0": the step must be above 0',
    ]);
    expect(problems(['engine.throttle.k=1:x:1'])[0]).toMatch(
      /^--param engine.throttle.k: range "1:x:1": expected low:high:step as numbers/,
    );
    expect(problems(['engine.throttle.k=1,null'])).toEqual([
      '--param engine.throttle.k: "null": expected a number, a duration, true/false or a word',
    ]);
    expect(problems(['a=1,,2', 'b=x,x'])).toEqual([
      '--param a: empty value in "1,,2" (values are separated by commas)',
      '--param b: x is given twice',
    ]);
    expect(problems([])).toEqual([
      '--param: give at least one parameter to sweep, like --param engine.throttle.k=1.5,2,3',
    ]);
  });

  it('refuses a grid of more than MAX_POINTS points before expanding it', () => {
    expect(MAX_POINTS).toBe(10_000);
    expect(problems(['a=1:101:1', 'b=1:100:1'])).toEqual([
      '--param: 101 × 100 = 10,100 points, more than a sweep runs (10,000); give fewer values',
    ]);
    expect(problems(['a=0:1e9:1'])[0]).toBe(
      '--param a: range "0:1e9:1" has 1,000,000,001 values, more than a sweep runs (10,000)',
    );
    expect(parseSweepParams(['a=1:100:1', 'b=1:100:1'])).toHaveLength(2);
  });
});

describe('the grid', () => {
  it('is the cartesian product, row-major: the last parameter varies fastest', () => {
    const params = parseSweepParams(['engine.throttle.k=1.1,2', 'engine.retryBudget.ratio=0.05,0.1,0.2']);
    expect(gridSize(params)).toBe(6);
    expect(expandGrid(params)).toEqual([
      [0, 0],
      [0, 1],
      [0, 2],
      [1, 0],
      [1, 1],
      [1, 2],
    ]);
    expect(pointSets(params, [1, 2])).toEqual(['engine.throttle.k=2', 'engine.retryBudget.ratio=0.2']);
    expect(expandGrid([{ path: 'a', values: [1, 2] }])).toEqual([[0], [1]]);
  });

  it('keeps the value as the user wrote it in the --set text', () => {
    const [p] = parseSweepParams(['layers[0].timeout=1.50s,3s']);
    expect(pointSets([p], [0])).toEqual(['layers[0].timeout=1.50s']);
  });
});

describe('paretoFront', () => {
  it('keeps the points no other point beats on goodput, amplification and p99 at once', () => {
    const pts = [
      figures(15, 1.1, 20_000), // best goodput
      figures(12, 1.0, 20_000), // lowest amplification
      figures(11, 1.2, 9_000), // lowest p99
      figures(14, 1.2, 21_000), // beaten by the first on all three
      figures(15, 1.1, 20_000), // equal to the first: neither dominates the other
      figures(12, 1.0, 20_500), // beaten by the second on p99 only
    ];
    expect(paretoFront(pts)).toEqual([true, true, true, false, true, false]);
    expect(dominates(pts[0], pts[3])).toBe(true);
    expect(dominates(pts[0], pts[4])).toBe(false);
  });

  it('puts a lone point on the front', () => {
    expect(paretoFront([figures(1, 1, 1)])).toEqual([true]);
    expect(paretoFront([])).toEqual([]);
  });
});

describe('sweepFile', () => {
  it("takes each point's figures and metric from its run, and flags the front", () => {
    const params = parseSweepParams(['engine.throttle.k=1.5,2']);
    const runs = [
      fakeRun('engine', { roots: 40, leafAttempts: 3, okShare: 0.5, shed: true }),
      fakeRun('engine', { roots: 40, leafAttempts: 1, okShare: 0.9 }),
    ];
    const metric = MetricCatalog.ofScenario({
      traffic: { layers: [{ name: 'llm' }] },
      upstream: { models: [{ name: 'primary' }] },
    } as never).resolve('amplification');
    const file = sweepFile(
      { scenario: 'brownout', variant: 'engine', seed: 1, params, metric, metricText: 'amplification' },
      expandGrid(params),
      runs,
      { wallMs: 5, workers: 2 },
    );
    expect(file.points.map((p) => p.values)).toEqual([[1.5], [2]]);
    expect(file.points[0].figures).toEqual(figuresOf(runs[0]));
    expect(file.points[0].figures.shed).toBeGreaterThan(0);
    expect(file.points[1].metric).toBe(runs[1].amplification);
    expect(file.points.map((p) => p.pareto)).toEqual([false, true]);
    expect(file).toMatchObject({
      metric: 'amplification',
      higherIsBetter: false,
      unit: 'times',
      timing: { wallMs: 5, workers: 2 },
    });
    expect(changedNothing(file)).toBe(false);
    expect(changedNothing({ ...file, points: [file.points[1], { ...file.points[1], values: [1.5] }] })).toBe(true);
  });

  it('lists a refused cell apart from the points, leaves it off the front, and writes no refused field when none was', () => {
    const params = parseSweepParams(['engine.throttle.k=1.5,2,3']);
    const run = fakeRun('engine', { roots: 40, leafAttempts: 1, okShare: 0.9 });
    const metric = MetricCatalog.ofScenario({
      traffic: { layers: [{ name: 'llm' }] },
      upstream: { models: [{ name: 'primary' }] },
    } as never).resolve('goodput');
    const base = { scenario: 'brownout', variant: 'engine', seed: 1, params, metric, metricText: 'goodput' };
    const file = sweepFile(base, expandGrid(params), [run, { refused: 'engine: clash' }, run], {
      wallMs: 5,
      workers: 1,
    });
    expect(file.points.map((p) => p.values)).toEqual([[1.5], [3]]);
    expect(file.points.map((p) => p.pareto)).toEqual([true, true]);
    expect(file.refused).toEqual([{ values: [2], reason: 'engine: clash' }]);
    expect(Object.keys(file)).toEqual([
      'schema',
      'scenario',
      'variant',
      'seed',
      'params',
      'metric',
      'higherIsBetter',
      'unit',
      'points',
      'refused',
      'timing',
    ]);
    expect(sweepCsv(file).split('\n').slice(0, 4)).toEqual([
      'engine.throttle.k,goodput,amplification,successRate,p99Ms,wastedTokens,shed,recoveryMs,metric:goodput,pareto,refused',
      expect.stringMatching(/^1\.5,.*,true,$/),
      '2,,,,,,,,,,engine: clash',
      expect.stringMatching(/^3,.*,true,$/),
    ]);
    expect(sweepJson(file)).toContain(
      '"refused": [\n    {\n      "values": [2],\n      "reason": "engine: clash"\n    }\n  ],',
    );
    const table = sweepTable(file, { color: true });
    expect(visible(table).split('\n')[2]).toMatch(/^ +2 {2}refused$/);
    expect(table).toContain(
      '\n1 of 3 points skipped because their values are refused, e.g. engine.throttle.k=2: engine: clash\n',
    );
    expect(sweepHeadline(file)).toMatch(/ · 3 points \(1 refused\), 2 on the Pareto front$/);
    expect(sweepFile(base, expandGrid(params), [run, run, run], { wallMs: 5, workers: 1 })).not.toHaveProperty(
      'refused',
    );
  });
});

describe('runSweep', () => {
  const params = parseSweepParams(['engine.throttle.k=1.5,2']);
  const metric = MetricCatalog.ofScenario({
    traffic: { layers: [{ name: 'llm' }] },
    upstream: { models: [{ name: 'primary' }] },
  } as never).resolve('goodput');
  const spec = {
    job: { scenario: 'x.yaml', cwd: '/', set: [] },
    scenario: 'x',
    variant: 'engine',
    seed: 1,
    params,
    metric,
    metricText: 'goodput',
    workers: 1,
    wallNow: () => 0,
  };

  it('throws a RefusedError on one line when every cell is refused', async () => {
    const err = await runSweep(spec, async (_job, points) => points.map(() => ({ refused: 'engine: clash' }))).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RefusedError);
    expect((err as Error).message).toBe(
      'every one of the 2 points is refused, e.g. engine.throttle.k=1.5: engine: clash',
    );
  });

  it('goes on when some cells run', async () => {
    const run = fakeRun('engine', { roots: 40, leafAttempts: 1, okShare: 0.9 });
    const file = await runSweep(spec, async () => [{ refused: 'engine: clash' }, run]);
    expect(file.points.map((p) => p.values)).toEqual([[2]]);
    expect(file.refused).toEqual([{ values: [1.5], reason: 'engine: clash' }]);
  });
});

describe('heatmap', () => {
  const file = makeSweep([K, RATIO]);

  it('shades a 4×4 grid from worst to best without colour, values beside the shades, in 80 columns', () => {
    const text = sweepHeatmap(file, { color: false });
    expect(text).not.toMatch(ANSI);
    const lines = text.split('\n');
    expect(lines[0]).toBe('heatmap of goodput (higher is better)');
    expect(lines[1]).toBe('rows engine.throttle.k · columns engine.retryBudget.ratio');
    expect(lines[2].trim().split(/\s+/)).toEqual(['0.05', '0.1', '0.2', '0.4']);
    // goodput = 10 + i − j: best bottom-left (k 3, ratio 0.05), worst top-right.
    expect(lines[6]).toMatch(/^ {2}3 ██ 13\.0\/s/);
    expect(lines[3]).toBe('1.1 ▒▒ 10.0/s ░░ 9.00/s ░░ 8.00/s ·· 7.00/s');
    expect(text).toContain('worst 7.00/s ·· ░░ ▒▒ ▓▓ ██ 13.0/s best');
    expect(widest(text)).toBeLessThanOrEqual(80);
  });

  it('colours the cells with 256-colour backgrounds when colour is on, with a legend', () => {
    const text = sweepHeatmap(file, { color: true });
    const lines = text.split('\n');
    expect(lines[6]).toContain('\x1b[38;5;16;48;5;83m 13.0/s \x1b[0m'); // best: green
    expect(lines[3]).toContain('\x1b[38;5;16;48;5;203m 7.00/s \x1b[0m'); // worst: red
    expect(text).not.toContain('██');
    expect(visible(lines[lines.length - 2])).toMatch(/^worst 7\.00\/s {20}13\.0\/s best$/);
    expect(widest(text)).toBeLessThanOrEqual(80);
  });

  it('turns the scale round when lower is better', () => {
    const text = sweepHeatmap(
      makeSweep([K, RATIO], { metric: 'amplification', higherIsBetter: false, unit: 'times' }),
      { color: false },
    );
    expect(text).toContain('heatmap of amplification (lower is better)');
    expect(text.split('\n')[3]).toMatch(/^1\.1 ██ 1\.00×/);
    expect(text).toContain('worst 2.50× ·· ░░ ▒▒ ▓▓ ██ 1.00× best');
  });

  it('draws one parameter as one row, and takes the best over a third parameter, saying so', () => {
    const one = sweepHeatmap(makeSweep([K]), { color: false }).split('\n');
    expect(one[1]).toBe('columns engine.throttle.k');
    expect(one[2].trim().split(/\s+/)).toEqual(['1.1', '1.5', '2', '3']);
    expect(one[3]).toMatch(/^ ·· 10\.0\/s.*██ 13\.0\/s$/);
    const three = makeSweep([K, RATIO, { path: 'engine.maxAttempts', values: [2, 3] }]);
    const text = sweepHeatmap(three, { color: false });
    expect(text).toContain('each cell: the best over engine.maxAttempts (2 values)');
    // goodput = 10 + i − j: the best over maxAttempts of (k 1.5, ratio 0.1) is 10 + 1 − 1.
    expect(text.split('\n')[4]).toMatch(/^1\.5 .*10\.0\/s/);
  });

  it('shows a cell without a value as —, and says when every cell is equal', () => {
    const text = heatmap(
      { title: 't', rows: ['a'], cols: ['x', 'y'], cells: [[null, 5]], higherIsBetter: true, format: String },
      { color: false },
    );
    expect(text).toBe('t\n     x    y\na    — ██ 5\nevery cell 5\n');
    expect(
      heatmap(
        { title: 't', rows: ['a'], cols: ['x'], cells: [[null]], higherIsBetter: true, format: String },
        { color: true },
      ),
    ).toContain('no point has a value');
  });
});

describe('sweep table and text', () => {
  const file = makeSweep([K, RATIO]);

  it('lists every point with its figures, marks the Pareto front, and fits 80 columns for 4×4', () => {
    const text = sweepTable(file, { color: false });
    const lines = text.split('\n');
    expect(lines[0]).toBe('  throttle.k  retryBudget.ratio  goodput  amplif.  success  root p99  wasted');
    expect(lines).toHaveLength(1 + 16 + 2);
    expect(lines[1]).toBe('*        1.1               0.05   10.0/s    1.00×   90.0 %    1.00 s   1,000');
    expect(lines.slice(1, 17).filter((l) => l.startsWith('*')).length).toBe(file.points.filter((p) => p.pareto).length);
    expect(widest(text)).toBeLessThanOrEqual(80);
  });

  it('adds a column for a metric that is not one of the figures, and bolds the best in colour', () => {
    const own = { ...makeSweep([K]), metric: 'layers.llm.p99', higherIsBetter: false, unit: 'ms' as const };
    own.points = own.points.map((p, i) => ({ ...p, metric: 500 - i * 100 }));
    const plain = sweepTable(own, { color: false });
    expect(plain.split('\n')[0]).toMatch(/wasted {2}layers\.llm\.p99$/);
    expect(plain.split('\n')[4]).toMatch(/ {2}200 ms$/);
    expect(sweepTable(own, { color: true }).split('\n')[4]).toContain('\x1b[1m        200 ms\x1b[0m');
  });

  it('shortens parameter labels by the keys they share', () => {
    expect(paramLabels([K, RATIO])).toEqual(['throttle.k', 'retryBudget.ratio']);
    expect(paramLabels([K])).toEqual(['engine.throttle.k']);
    expect(
      paramLabels([
        { path: 'engine.throttle.k', values: [] },
        { path: 'engine.throttle.window', values: [] },
      ]),
    ).toEqual(['k', 'window']);
  });

  it('prints what was swept, the table, the heatmap, the best point and the front', () => {
    const text = sweepText(file, { color: false });
    expect(
      text.startsWith(
        'brownout · variant engine · seed 1 · 16 points\nsweep of engine.throttle.k (4) × engine.retryBudget.ratio (4)\n',
      ),
    ).toBe(true);
    expect(text).toContain('best goodput 13.0/s at\n  --set engine.throttle.k=3 --set engine.retryBudget.ratio=0.05\n');
    const front = file.points.filter((p) => p.pareto).length;
    expect(text).toContain(`Pareto front (goodput ↑, amplification ↓, root p99 ↓): ${front} of 16 points`);
    expect(widest(text)).toBeLessThanOrEqual(80);
    expect(sweepHeadline(file)).toBe(
      `best goodput 13.0/s: --set engine.throttle.k=3 --set engine.retryBudget.ratio=0.05 · 16 points, ${front} on the Pareto front`,
    );
  });
});

describe('sweep files', () => {
  const file = makeSweep([K, { path: 'layers[0].name', values: ['a,b', 'say "hi"'] }]);

  it('writes CSV: a header, then one row per point, quoting what needs it', () => {
    const lines = sweepCsv(file).trimEnd().split('\n');
    expect(lines[0]).toBe(
      'engine.throttle.k,layers[0].name,goodput,amplification,successRate,p99Ms,wastedTokens,shed,recoveryMs,metric:goodput,pareto',
    );
    expect(lines).toHaveLength(1 + 8);
    expect(lines[2]).toBe('1.1,"say ""hi""",9,1.1,0.9,1100,1000,0,2000,9,false');
    expect(
      sweepCsv({
        ...file,
        points: [{ ...file.points[0], metric: null, figures: { ...file.points[0].figures, recoveryMs: null } }],
      }).split('\n')[1],
    ).toBe('1.1,"a,b",10,1,0.9,1000,1000,0,,,true');
  });

  it('writes JSON that reads back unchanged, with value lists on one line', () => {
    const text = sweepJson(file);
    expect(JSON.parse(text)).toEqual(file);
    expect(text).toContain('"values": [1.1, 1.5, 2, 3]');
    expect(text).toContain('"values": [1.1, "a,b"]');
    expect(text.endsWith('}\n')).toBe(true);
  });
});
