import { beforeAll, describe, expect, it } from 'vitest';
import { sweepCommand } from '../../src/cli/commands/sweep.js';
import { UsageError } from '../../src/cli/io.js';
import { PointError } from '../../src/explore/point-error.js';
import type { RunPointsFn } from '../../src/explore/run-points.js';
import type { SweepFile } from '../../src/report/sweep-file.js';
import { captureIo, cli, tempDir, type CliRun } from './capture-io.js';
import { flakyScenario } from '../explore/flaky-scenario.js';

/**
 * One engine layer over an upstream failing 30 % of calls (as in tune.test.ts): the retry
 * budget's ratio changes goodput and amplification, so sweep points differ. 10 s at 20
 * roots/s, ~20 ms a run. Prompt sizes are uniform so two params can clash (min above max).
 */
const FLAKY = flakyScenario({ prompt: '{ dist: uniform, min: 100, max: 300 }' });

/** The same, with one variant that is not `engine`: the sweep runs the scenario as written. */
const NO_ENGINE_VARIANT = `${FLAKY}variants:\n  gentle:\n    engine.maxAttempts: 2\n`;

const GRID = ['--param', 'engine.retryBudget.ratio=0.05,0.3', '--param', 'engine.throttle.k=1.5,3'];

let dir: string;
beforeAll(() => {
  dir = tempDir({ 'flaky.yaml': FLAKY, 'plain.yaml': NO_ENGINE_VARIANT });
});

/** `stormlab sweep <scenario> …`, in this thread unless `--workers` is given (these runs are shorter than starting a thread). */
function sweep(args: string[], scenario = 'flaky.yaml', options: { writeError?: string } = {}): Promise<CliRun> {
  const workers = args.includes('--workers') ? [] : ['--workers', '1'];
  return cli(['sweep', scenario, ...workers, ...args], { cwd: dir, ...options });
}

/** A usage error: exit 2, nothing on stdout, one `stormlab:` line per problem. */
function usage(r: CliRun): string[] {
  expect(r.code, r.err).toBe(2);
  expect(r.out).toBe('');
  const lines = r.err.trimEnd().split('\n');
  for (const l of lines) expect(l).toMatch(/^stormlab: /);
  return lines.map((l) => l.slice('stormlab: '.length));
}

describe('stormlab sweep', () => {
  it('runs the grid and prints the table, the heatmap and the Pareto front', async () => {
    const r = await sweep(GRID);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toBe(
      'sweeping 4 points of flaky (variant engine) on 1 worker\n1/4 points\n2/4 points\n3/4 points\n4/4 points\n',
    );
    expect(
      r.out.startsWith(
        'flaky · variant engine · seed 7 · 4 points\nsweep of engine.retryBudget.ratio (2) × engine.throttle.k (2)\n',
      ),
    ).toBe(true);
    expect(r.out).toContain('  retryBudget.ratio  throttle.k  goodput  amplif.  success  root p99  wasted\n');
    expect(r.out).toContain(
      'heatmap of goodput (higher is better)\nrows engine.retryBudget.ratio · columns engine.throttle.k\n',
    );
    expect(r.out).toMatch(
      /best goodput [\d.]+\/s at\n {2}--set engine\.retryBudget\.ratio=0\.3 --set engine\.throttle\.k=(1\.5|3)\n/,
    );
    expect(r.out).toMatch(/Pareto front \(goodput ↑, amplification ↓, root p99 ↓\): \d of 4 points/);
    expect(r.out).not.toMatch(/\x1b\[/);
    expect(Math.max(...r.out.split('\n').map((l) => [...l].length))).toBeLessThanOrEqual(80);
  });

  it('is deterministic: the same grid twice, on one worker or two threads, prints the same', async () => {
    const a = await sweep([...GRID, '--workers', '2']);
    const b = await sweep([...GRID, '--workers', '2']);
    const c = await sweep(GRID);
    expect(a.code, a.err).toBe(0);
    expect(a.err.split('\n')[0]).toBe('sweeping 4 points of flaky (variant engine) on 2 workers');
    expect(b.out).toBe(a.out);
    expect(c.out).toBe(a.out);
  }, 15_000);

  it('writes --json (stormlab.sweep/v1) and --csv, and says so', async () => {
    const r = await sweep([...GRID, '--metric', 'amplification', '--json', 's.json', '--csv', 's.csv']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('wrote s.json\nwrote s.csv\n');
    const file = JSON.parse(r.files.get('s.json')!) as SweepFile;
    expect(file).toMatchObject({
      schema: 'stormlab.sweep/v1',
      scenario: 'flaky',
      variant: 'engine',
      seed: 7,
      metric: 'amplification',
      higherIsBetter: false,
      unit: 'times',
      timing: { wallMs: 0, workers: 1 },
    });
    expect(file.params).toEqual([
      { path: 'engine.retryBudget.ratio', values: [0.05, 0.3] },
      { path: 'engine.throttle.k', values: [1.5, 3] },
    ]);
    expect(file.points.map((p) => p.values)).toEqual([
      [0.05, 1.5],
      [0.05, 3],
      [0.3, 1.5],
      [0.3, 3],
    ]);
    expect(file.points.every((p) => p.metric === p.figures.amplification)).toBe(true);
    // A bigger budget retries more failures: more amplification.
    expect(file.points[2].figures.amplification).toBeGreaterThan(file.points[0].figures.amplification);
    const csv = r.files.get('s.csv')!.trimEnd().split('\n');
    expect(csv[0]).toBe(
      'engine.retryBudget.ratio,engine.throttle.k,goodput,amplification,successRate,p99Ms,wastedTokens,shed,recoveryMs,metric:amplification,pareto',
    );
    expect(csv).toHaveLength(5);
    expect(csv[1].startsWith(`0.05,1.5,${file.points[0].figures.goodput},`)).toBe(true);
  });

  it('charts any metric the gate knows, with its own column, and --seed, --set, --duration apply to every point', async () => {
    const r = await sweep([
      '--param',
      'engine.retryBudget.ratio=0.05:0.15:0.05',
      '--metric',
      'layers.llm.p99',
      '--seed',
      '3',
      '--duration',
      '5s',
      '--set',
      'arrival.rate=10',
      '--json',
      's.json',
    ]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('heatmap of layers.llm.p99 (lower is better)\ncolumns engine.retryBudget.ratio\n');
    expect(r.out.split('\n')[3]).toMatch(/wasted {2}layers\.llm\.p99$/);
    const file = JSON.parse(r.files.get('s.json')!) as SweepFile;
    expect(file.seed).toBe(3);
    expect(file.params[0].values).toEqual([0.05, 0.1, 0.15]);
    expect(file.points[0].figures.goodput).toBeLessThanOrEqual(10);
  });

  it("-q prints only the best point's line, and no progress", async () => {
    const r = await sweep([...GRID, '-q']);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toBe('');
    expect(r.out).toMatch(
      /^best goodput [\d.]+\/s: --set engine\.retryBudget\.ratio=0\.3 --set engine\.throttle\.k=(1\.5|3) · 4 points, \d on the Pareto front\n$/,
    );
  });

  it('runs the scenario as written when it has no engine variant, and says when nothing changed', async () => {
    const plain = await sweep(['--param', 'engine.throttle.k=1.5,3'], 'plain.yaml');
    expect(plain.code, plain.err).toBe(0);
    expect(plain.err.split('\n')[0]).toBe(
      'sweeping 2 points of flaky (as written: it has no engine variant) on 1 worker',
    );
    expect(plain.out.split('\n')[0]).toBe('flaky · variant flaky · seed 7 · 2 points');
    // The naive variant ignores the engine's knobs: every point is the same.
    const naive = await cli([
      'sweep',
      'brownout',
      '--variant',
      'naive',
      '--duration',
      '5s',
      '--workers',
      '1',
      '--param',
      'engine.throttle.k=1.5,3',
    ]);
    expect(naive.code, naive.err).toBe(0);
    expect(naive.err).toContain('sweeping 2 points of brownout (variant naive) on 1 worker\n');
    expect(naive.err).toContain(
      'note: the parameters changed nothing (every point came out the same): does variant naive use the engine?\n',
    );
    expect(plain.err).not.toContain('note:');
  });
});

describe('stormlab sweep: cells whose values are refused together', () => {
  // Each value is fine alone; prompt min 250 with max 200 is not, and neither is an engine breaker whose openMs passes maxOpenMs.
  const CLASH = ['--param', 'tokens.prompt.min=100,250', '--param', 'tokens.prompt.max=200,300'];

  it('shows the refused cell in the table, says how many and why, and runs the rest', async () => {
    const r = await sweep([...CLASH, '--json', 's.json', '--csv', 's.csv']);
    expect(r.code, r.err).toBe(0);
    expect(r.out.split('\n')[0]).toBe('flaky · variant engine · seed 7 · 4 points (1 refused)');
    expect(r.out).toMatch(/^ {2}min +max +goodput .*\n(?:\* .*\n){2} {2}250 +200 +refused\n\* 250 +300 /m);
    expect(r.out).toContain(
      '\n1 of 4 points skipped because their values are refused, e.g. tokens.prompt.min=250 tokens.prompt.max=200: tokens.prompt.max: expected at least min (250), got 200\n',
    );
    expect(r.out).toContain('— where the values are refused (see the table)');
    const file = JSON.parse(r.files.get('s.json')!) as SweepFile;
    expect(file.points.map((p) => p.values)).toEqual([
      [100, 200],
      [100, 300],
      [250, 300],
    ]);
    expect(file.refused).toEqual([
      { values: [250, 200], reason: 'tokens.prompt.max: expected at least min (250), got 200' },
    ]);
    const csv = r.files.get('s.csv')!.trimEnd().split('\n');
    expect(csv[0].endsWith(',metric:goodput,pareto,refused')).toBe(true);
    expect(csv).toHaveLength(5);
    expect(csv[1].endsWith(',')).toBe(true);
    expect(csv[3]).toBe('250,200,,,,,,,,,,"tokens.prompt.max: expected at least min (250), got 200"');
  });

  it('skips the cells the engine refuses, on threads too, and -q counts them', async () => {
    const args = [
      '--set',
      'engine.breaker={}',
      '--param',
      'engine.breaker.openMs=5s,60s',
      '--param',
      'engine.breaker.maxOpenMs=30s,120s',
    ];
    const one = await sweep([...args, '--json', 's.json']);
    const two = await sweep([...args, '--workers', '2', '--json', 's.json']);
    expect(one.code, one.err).toBe(0);
    expect(two.out).toBe(one.out);
    const file = JSON.parse(one.files.get('s.json')!) as SweepFile;
    expect(file.refused).toEqual([
      { values: ['60s', '30s'], reason: 'engine: breaker.maxOpenMs must be a duration >= 1m, got 30s' },
    ]);
    const q = await sweep([...args, '-q']);
    expect(q.out).toMatch(/ · 4 points \(1 refused\), \d on the Pareto front\n$/);
  }, 15_000);
});

describe('stormlab sweep: bad input (exit 2, before anything runs)', () => {
  it('needs a --param, well formed', async () => {
    expect(usage(await sweep([]))).toEqual([
      '--param: give at least one parameter to sweep, like --param engine.throttle.k=1.5,2,3',
    ]);
    expect(usage(await sweep(['--param', 'engine.throttle.k']))).toEqual([
      '--param "engine.throttle.k": expected path=v1,v2,… like engine.throttle.k=1.5,2,3',
    ]);
    expect(usage(await sweep(['--param', 'engine.throttle.k=1,,2', '--param', 'engine.maxAttempts=2,2']))).toEqual([
      '--param engine.throttle.k: empty value in "1,,2" (values are separated by commas)',
      '--param engine.maxAttempts: 2 is given twice',
    ]);
    expect(usage(await sweep(['--param', 'a=1:3:0.5', '--param', 'a=4']))).toEqual([
      '--param a is given twice: list all its values in one --param',
    ]);
    expect(usage(await sweep(['--param', 'a=1:101:1', '--param', 'b=1:100:1']))).toEqual([
      '--param: 101 × 100 = 10,100 points, more than a sweep runs (10,000); give fewer values',
    ]);
  });

  it('checks every value against the scenario, one line per problem', async () => {
    const lines = usage(
      await sweep([
        '--param',
        'engine.throttle.k=0.5,2,2000',
        '--param',
        'engine.budget.ratio=0.1,0.2',
        '--param',
        'engine.maxAttempts=3',
      ]),
    );
    expect(lines).toEqual([
      '--param engine.throttle.k=0.5: expected a number >= 1 and <= 1000, got 0.5',
      '--param engine.throttle.k=2000: expected a number >= 1 and <= 1000, got 2000',
      '--param engine.budget.ratio: engine.budget: unknown key (did you mean retryBudget?)',
    ]);
    expect(usage(await sweep(['--param', 'engine.breaker.failureRatio=0.5']))).toEqual([
      "--param engine.breaker.failureRatio=0.5: engine.breaker is a boolean, not a mapping (the scenario turns it off; --set 'engine.breaker={}' turns it on with its defaults)",
    ]);
  });

  it('names --metric with a did-you-mean, and checks --workers and --variant', async () => {
    expect(usage(await sweep([...GRID, '--metric', 'goodptu']))).toEqual([
      '--metric: unknown metric "goodptu" (did you mean goodput?)',
    ]);
    expect(usage(await sweep([...GRID, '--metric', 'layers.lm.p99']))[0]).toMatch(
      /^--metric: unknown layer "lm" in "layers\.lm\.p99" \(did you mean llm\?\)/,
    );
    expect(usage(await sweep([...GRID, '--workers', '0']))).toEqual([
      '--workers: expected a whole number of at least 1, or auto, got "0"',
    ]);
    expect(usage(await sweep([...GRID, '--workers', 'many']))).toEqual([
      '--workers: expected a whole number of at least 1, or auto, got "many"',
    ]);
    expect(usage(await sweep([...GRID, '--variant', 'fast']))).toEqual([
      '--variant: unknown variant "fast" (known: naive, engine)',
    ]);
    expect(usage(await sweep([...GRID, '--variant', 'naive,engine']))).toEqual([
      '--variant: expected one variant name, got "naive,engine"',
    ]);
  });

  it("reports the scenario's own problems and the shared flags as run does", async () => {
    const missing = await sweep(GRID, 'nope');
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/^nope: no such file or bundled scenario \(bundled: brownout, /);
    expect(usage(await sweep([...GRID, '--seed', '-1']))).toEqual([
      '--seed: expected an integer from 0 to 4294967295, got "-1"',
    ]);
    expect(usage(await sweep([...GRID, '--duration', '10']))).toEqual([
      '--duration: expected a duration with a unit, like 30s or 2m, got "10"',
    ]);
    expect(usage(await sweep([...GRID, '--set', 'arrival.rate=-1']))).toEqual([
      '--set "arrival.rate=-1": arrival.rate: expected a positive number, got -1',
    ]);
  });

  it('exits 2 on one line when the engine refuses every cell, each value being fine alone', async () => {
    // Every openMs is above every maxOpenMs; maxOpenMs=10s alone clashes with the default openMs too, and that is no fault of the value.
    const lines = usage(
      await sweep([
        '--set',
        'engine.breaker={}',
        '--param',
        'engine.breaker.openMs=40s,60s',
        '--param',
        'engine.breaker.maxOpenMs=10s,30s',
        '-q',
      ]),
    );
    expect(lines).toEqual([
      '--param: every one of the 4 points is refused, e.g. engine.breaker.openMs=40s engine.breaker.maxOpenMs=10s: engine: breaker.maxOpenMs must be a duration >= 40s, got 10s',
    ]);
  });

  it("turns the runner's refused points into refused cells, all of them into a UsageError, and lets bugs through", async () => {
    const io = captureIo({ cwd: dir });
    const allRefused: RunPointsFn = async (_job, points) =>
      points.map(() => ({ refused: 'tokens.prompt.max: below min' }));
    await expect(
      sweepCommand(io, 'flaky.yaml', { param: ['engine.throttle.k=1.5,2'], workers: '1', quiet: true }, allRefused),
    ).rejects.toThrow(
      new UsageError(
        '--param: every one of the 2 points is refused, e.g. engine.throttle.k=1.5: tokens.prompt.max: below min',
      ),
    );
    const bug = async (): Promise<never> => {
      throw new PointError(0, 4, [], 'TypeError: x is undefined');
    };
    await expect(
      sweepCommand(io, 'flaky.yaml', { param: ['engine.throttle.k=1.5,2'], workers: '1' }, bug),
    ).rejects.toBeInstanceOf(PointError);
  });

  it('documents its flags in --help', async () => {
    const r = await cli(['sweep', '--help']);
    expect(r.code).toBe(0);
    for (const o of [
      '--param',
      '--metric',
      '--variant',
      '--workers',
      '--seed',
      '--set',
      '--duration',
      '--json',
      '--csv',
      '--quiet',
    ])
      expect(r.out).toContain(o);
    expect(r.out).toMatch(/Exit codes:\n {4}0 {2}ok\n {4}2 {2}bad input/);
  });

  it('cannot write --json: exit 2 naming the flag', async () => {
    const r = await sweep([...GRID, '--json', 'no/dir/s.json'], 'flaky.yaml', { writeError: 'ENOENT' });
    expect(r.code).toBe(2);
    expect(r.err).toContain('stormlab: --json: cannot write no/dir/s.json: its directory does not exist\n');
  });
});

describe('stormlab sweep --seeds and --workers auto', () => {
  it('runs every point on each seed: figures are the means of the one-seed sweeps, with 95 % intervals', async () => {
    const grid = ['--param', 'engine.retryBudget.ratio=0.05,0.3'];
    const many = await sweep([...grid, '--seeds', '3', '--json', 'm.json']);
    expect(many.code, many.err).toBe(0);
    const file = JSON.parse(many.files.get('m.json')!) as SweepFile;
    expect(file.seeds).toEqual([7, 8, 9]);
    const singles: SweepFile[] = [];
    for (const seed of ['7', '8', '9']) {
      const one = await sweep([...grid, '--seed', seed, '--json', 'one.json']);
      singles.push(JSON.parse(one.files.get('one.json')!) as SweepFile);
    }
    file.points.forEach((p, i) => {
      const goodputs = singles.map((s) => s.points[i].figures.goodput);
      const mean = goodputs.reduce((a, b) => a + b, 0) / 3;
      expect(p.figures.goodput).toBeCloseTo(mean, 3);
      expect(p.metric).toBeCloseTo(mean, 3);
      expect(p.spread!.goodput.low).toBeLessThanOrEqual(Math.min(...goodputs));
      expect(p.spread!.goodput.high).toBeGreaterThanOrEqual(Math.max(...goodputs));
      expect(p.spread!.metric).toEqual(p.spread!.goodput);
    });
    // The heatmap and the Pareto front show the spread; the title says what the figures are.
    expect(many.out).toContain('seeds 7–9 (means ± 95 % intervals)');
    expect(many.out).toContain('each cell: the mean over 3 seeds ± half its 95 % interval');
    expect(many.out).toMatch(/Pareto front[^\n]*\n[^\n]*\n[^\n]*\n.*\/s ±[\d.]+\/s/);
    expect(many.err.split('\n')[0]).toBe('sweeping 2 points × 3 seeds of flaky (variant engine) on 1 worker');
  }, 30_000);

  it('with --workers auto says what it chose, on stderr and in the -q line, and records it in timing.workers', async () => {
    const r = await cli(['sweep', 'flaky.yaml', ...GRID, '--json', 'a.json'], { cwd: dir });
    expect(r.code, r.err).toBe(0);
    expect(r.err.split('\n')[0]).toBe('sweeping 4 points of flaky (variant engine) on auto workers');
    const line = /workers: auto chose (\d+)/.exec(r.err);
    expect(line, r.err).not.toBeNull();
    const file = JSON.parse(r.files.get('a.json')!) as SweepFile;
    expect(file.timing.workers).toBe(Number(line![1]));
    const q = await cli(['sweep', 'flaky.yaml', ...GRID, '-q'], { cwd: dir });
    expect(q.err).toBe('');
    expect(q.out).toMatch(/ on the Pareto front · \d+ workers? \(auto\)\n$/);
  }, 30_000);
});
