import { beforeAll, describe, expect, it } from 'vitest';
import { isRefused, runPoints } from '../../src/explore/run-points.js';
import type { RunResult } from '../../src/run/metrics/result.js';
import { formatDuration } from '../../src/scenario/duration.js';
import { cli, tempDir, type CliRun } from './capture-io.js';
import { flakyScenario } from '../explore/flaky-scenario.js';

/**
 * One layer calling an upstream that fails 30 % of calls with 503, retried by the engine with
 * only the retry budget on: a larger budget ratio buys goodput (more failures retried into
 * successes) with amplification (more upstream attempts). So "maximize goodput subject to
 * amplification <= 1.2" has its answer on the constraint's edge, near ratio 0.2; a brute-force
 * grid finds it too. 10 s of 20 roots/s: ~15 ms a run.
 */
const FLAKY = flakyScenario({ throttle: 'false' });

const GOAL = ['--maximize', 'goodput', '--subject-to', 'amplification <= 1.2'];
const LIMIT = 1.2;

let dir: string;
beforeAll(() => {
  dir = tempDir({ 'flaky.yaml': FLAKY });
});

/**
 * `stormlab tune flaky.yaml …`, in this thread unless `--workers` is given: these runs take
 * ~15 ms, less than starting a worker thread (the tests about workers pass their own --workers).
 */
function tune(args: string[], options: { wallStepMs?: number } = {}): Promise<CliRun> {
  const workers = args.includes('--workers') ? [] : ['--workers', '1'];
  // One seed unless a test asks for more: these tests are about the search, not the noise.
  const seeds = args.includes('--seeds') ? [] : ['--seeds', '1'];
  return cli(['tune', 'flaky.yaml', ...workers, ...seeds, ...args], { cwd: dir, ...options });
}

async function tuneJson(args: string[]): Promise<{ r: CliRun; json: any }> {
  const r = await tune([...args, '--json', 'tune.json']);
  const text = r.files.get('tune.json');
  expect(text, r.err).toBeDefined();
  return { r, json: JSON.parse(text!) };
}

/** Every point of a grid, run the way the tuner runs them (variant engine, same seed). */
async function bruteForce(points: string[][]): Promise<RunResult[]> {
  const out = await runPoints({ scenario: 'flaky.yaml', cwd: dir, set: [], variant: 'engine' }, points, { workers: 1 });
  expect(out.filter(isRefused)).toEqual([]);
  return out as RunResult[];
}

function logGrid(min: number, max: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => Number((min * (max / min) ** (i / (n - 1))).toPrecision(3)));
}

/** The best feasible point of a brute-forced grid. */
function bestFeasible(runs: RunResult[]): { index: number; run: RunResult } {
  let best = -1;
  runs.forEach((r, i) => {
    if (r.amplification <= LIMIT && (best < 0 || r.goodput > runs[best].goodput)) best = i;
  });
  expect(best, 'some grid point is feasible').toBeGreaterThanOrEqual(0);
  return { index: best, run: runs[best] };
}

describe('stormlab tune finds the optimum a brute-force grid finds', () => {
  it('one knob: the largest retry budget ratio whose amplification stays within 1.2', async () => {
    const grid = logGrid(0.01, 0.5, 40);
    const runs = await bruteForce(grid.map((r) => [`engine.retryBudget.ratio=${r}`]));
    const bf = bestFeasible(runs);
    // The trade-off is real: the unconstrained best (ratio 0.5) breaks the constraint.
    expect(runs.at(-1)!.amplification).toBeGreaterThan(LIMIT);
    expect(runs.at(-1)!.goodput).toBeGreaterThan(bf.run.goodput);

    const { r, json } = await tuneJson([...GOAL, '--params', 'engine.retryBudget.ratio', '--budget', '20']);
    expect(r.code, r.err).toBe(0);
    const ratio = json.best.values[0];
    expect(json.feasible).toBe(true);
    expect(json.best.figures.amplification).toBeLessThanOrEqual(LIMIT);
    // Within the grid's resolution: no further than one grid step from the grid's answer, and
    // no worse than the grid point one step below it.
    const step = grid[1] / grid[0];
    expect(Math.abs(Math.log(ratio / grid[bf.index]))).toBeLessThanOrEqual(Math.log(step) * 1.01);
    expect(json.best.figures.goodput).toBeGreaterThanOrEqual(runs[bf.index - 1].goodput);
    expect(json.search.evaluations).toBeLessThanOrEqual(20);
    // What the tuner reports for its point is what a run of that point gives.
    const [again] = await bruteForce([[`engine.retryBudget.ratio=${ratio}`]]);
    expect(json.best.figures.goodput).toBe(Number(again.goodput.toPrecision(6)));
  });

  it('two knobs, one of them integer: as good as the best of a 4 × 20 grid', async () => {
    const ratios = logGrid(0.01, 0.5, 20);
    const points = [1, 2, 3, 4].flatMap((a) =>
      ratios.map((r) => [`engine.maxAttempts=${a}`, `engine.retryBudget.ratio=${r}`]),
    );
    const bf = bestFeasible(await bruteForce(points));

    const { r, json } = await tuneJson([
      ...GOAL,
      '--params',
      'engine.maxAttempts=1:4,engine.retryBudget.ratio',
      '--budget',
      '40',
    ]);
    expect(r.code, r.err).toBe(0);
    expect(Number.isInteger(json.best.values[0])).toBe(true);
    expect(json.best.figures.amplification).toBeLessThanOrEqual(LIMIT);
    expect(json.best.figures.goodput).toBeGreaterThanOrEqual(bf.run.goodput * 0.99);
    expect(json.search.evaluations).toBeLessThanOrEqual(40);
  });
});

describe('stormlab tune output', () => {
  it('prints the answer as an engine: block, the figures beside the current ones, the search and the runners-up', async () => {
    const r = await tune([
      ...GOAL,
      '--params',
      'engine.retryBudget.ratio,engine.retryBudget.windowMs=5s:20s',
      '--budget',
      '12',
    ]);
    expect(r.code, r.err).toBe(0);
    const block = /^ {2}engine:\n {4}retryBudget:\n {6}ratio: ([\d.]+)\n {6}windowMs: ([\d.]+m?s)$/m.exec(r.out);
    expect(block, r.out).not.toBeNull();
    expect(r.out).toMatch(/^ {2}engine\.retryBudget\.ratio +[\d.]+ +0\.1$/m);
    expect(r.out).toMatch(/^ {2}engine\.retryBudget\.windowMs +[\d.]+m?s +10s$/m);
    expect(r.out).toMatch(/^ {2}goodput \(maximize\) +[\d.]+\/s +[\d.]+\/s$/m);
    expect(r.out).toMatch(/^ {2}amplification <= 1\.2 +[\d.]+× held +1\.\d\d× held$/m);
    expect(r.out).toMatch(/^ {2}success +[\d.]+ % +[\d.]+ %$/m);
    expect(r.out).toMatch(/^ {2}p99 +/m);
    expect(r.out).toMatch(/^search: 12 points \+ the current values = 13 runs in \d+ rounds?/m);
    expect(r.out).toMatch(/^ {2}round 1 {2}10 points +retryBudget\.ratio 0\.01–0\.5, retryBudget\.windowMs 5s–20s/m);
    expect(r.out).toMatch(/^runners-up\n {2}retryBudget\.ratio=/m);
    expect(r.out).toContain(
      `reproduce: stormlab run flaky.yaml --variant engine --set engine.retryBudget.ratio=${block![1]} --set engine.retryBudget.windowMs=${block![2]}`,
    );
    expect(r.err).toMatch(
      /^tuning engine\.retryBudget\.ratio, engine\.retryBudget\.windowMs of flaky, variant engine \(--variant to pick another\): up to 12 points/,
    );
    expect(r.err).toMatch(/^round 1: 10 points in /m);
  });

  it('-q prints one line; --json writes stormlab.tune/v1 with the best point, the baseline and every point', async () => {
    const { r, json } = await tuneJson([...GOAL, '--params', 'engine.retryBudget.ratio', '--budget', '8', '-q']);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    expect(r.out).toMatch(
      /^best: engine\.retryBudget\.ratio=[\d.]+ · goodput [\d.]+\/s \(now [\d.]+\/s, \+[\d.]+ %\) · amplification <= 1\.2: [\d.]+× held\n$/,
    );
    expect(json).toMatchObject({
      timing: { workers: 1 },
      schema: 'stormlab.tune/v1',
      scenario: 'flaky',
      variant: 'engine',
      seed: 7,
      durationMs: 10_000,
      objective: { direction: 'maximize', text: 'goodput', metric: 'goodput', unit: 'rate' },
      constraints: [{ text: 'amplification <= 1.2', metric: 'amplification', op: '<=', threshold: 1.2, unit: 'times' }],
      params: [
        {
          path: 'engine.retryBudget.ratio',
          min: 0.01,
          max: 0.5,
          scale: 'log',
          integer: false,
          builtIn: true,
          current: 0.1,
        },
      ],
      feasible: true,
      baseline: { values: [0.1], feasible: true, round: 0 },
      search: { budget: 8, evaluations: 8 },
    });
    expect(json.points).toHaveLength(8);
    expect(json.points[0]).toEqual(json.best);
    // The current values are a point of the search too, and score as the baseline does.
    const current = json.points.find((p: any) => p.values[0] === 0.1);
    expect(current.figures).toEqual(json.baseline.figures);
  });

  it('takes a range a knob keeps its kind in: whole numbers, log scale, durations', async () => {
    const { json } = await tuneJson([
      ...GOAL,
      '--params',
      'engine.maxAttempts=2:4,engine.retryBudget.ratio=0.05:0.3,engine.backoff.baseMs=100:1s:linear',
      '--budget',
      '3',
    ]);
    expect(json.params).toMatchObject([
      { path: 'engine.maxAttempts', min: 2, max: 4, integer: true, scale: 'linear', builtIn: false, current: 3 },
      { path: 'engine.retryBudget.ratio', min: 0.05, max: 0.3, integer: false, scale: 'log', current: 0.1 },
      { path: 'engine.backoff.baseMs', min: 100, max: 1000, duration: true, scale: 'linear', current: 500 },
    ]);
  });

  it('is deterministic: the same flags give the same answer and the same points', async () => {
    const args = [...GOAL, '--params', 'engine.maxAttempts,engine.retryBudget.ratio', '--budget', '15'];
    const a = await tuneJson([...args, '--workers', '2']);
    const b = await tuneJson([...args, '--workers', '1']);
    const strip = (j: any) => ({ ...j, timing: undefined });
    expect(strip(b.json)).toEqual(strip(a.json));
    expect(b.r.out).toBe(a.r.out);
  });

  it('keeps the current values when nothing beats them', async () => {
    // Without a fault nothing fails, so nothing a retry knob does changes a figure.
    const r = await tune([
      '--set',
      'upstream.faults=[]',
      ...GOAL,
      '--params',
      'engine.retryBudget.ratio',
      '--budget',
      '6',
    ]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('the current values are the best found: keep them');
    expect(r.out).toMatch(/^ {2}engine\.retryBudget\.ratio +0\.1 +0\.1$/m);
  });

  it('minimizes, and says when an objective reads backwards', async () => {
    const { r, json } = await tuneJson([
      '--minimize',
      'amplification',
      '--subject-to',
      'goodput >= 15',
      '--params',
      'engine.retryBudget.ratio',
      '--budget',
      '10',
    ]);
    expect(r.code, r.err).toBe(0);
    expect(json.best.figures.goodput).toBeGreaterThanOrEqual(15);
    expect(
      json.points
        .filter((p: any) => p.feasible)
        .every((p: any) => p.figures.amplification >= json.best.figures.amplification),
    ).toBe(true);
    const back = await tune(['--maximize', 'amplification', '--params', 'engine.retryBudget.ratio', '--budget', '2']);
    expect(back.err).toContain('note: more amplification is usually worse; did you mean --minimize?');
  });

  it('says when the tuned variant does not use the engine', async () => {
    const r = await tune([...GOAL, '--variant', 'naive', '--params', 'engine.retryBudget.ratio', '--budget', '2']);
    expect(r.err).toContain(
      'note: no layer of naive retries with the engine (retry policy engine), so engine knobs change nothing',
    );
  });
});

describe('stormlab tune when the engine refuses some points: infeasible, skipped and counted', () => {
  // Each range is fine at both ends, but where openMs passes maxOpenMs the engine refuses the point.
  const CLASH = [
    '--set',
    'engine.breaker={}',
    '--maximize',
    'goodput',
    '--subject-to',
    'amplification <= 1.2',
    '--params',
    'engine.breaker.openMs=1s:60s,engine.breaker.maxOpenMs=10s:100s',
    '--budget',
    '12',
  ];

  it('goes on, answers from the points that ran, and says how many were skipped and why', async () => {
    const { r, json } = await tuneJson(CLASH);
    expect(r.code, r.err).toBe(0);
    const refused = json.refused as Array<{ values: number[]; reason: string; round: number }>;
    expect(refused.length).toBeGreaterThan(0);
    for (const p of refused) {
      expect(p.values[0]).toBeGreaterThan(p.values[1]);
      expect(p.reason).toBe(
        `engine: breaker.maxOpenMs must be a duration >= ${formatDuration(p.values[0])}, got ${formatDuration(p.values[1])}`,
      );
    }
    // Every point is either run or refused, each once; the refused ones spent their place in the budget.
    expect(json.points.length + refused.length).toBe(json.search.evaluations);
    expect(json.points.every((p: any) => p.values[0] <= p.values[1])).toBe(true);
    expect(json.best.values[0]).toBeLessThanOrEqual(json.best.values[1]);
    const line = r.out.split('\n').find((l) => l.includes('points skipped because'));
    expect(line).toBe(
      `${refused.length} of ${json.search.evaluations + 1} points skipped because their values are refused, e.g. engine.breaker.openMs=${formatDuration(refused[0].values[0])} engine.breaker.maxOpenMs=${formatDuration(refused[0].values[1])}: ${refused[0].reason}`,
    );
    expect(r.out).toMatch(/^search: 12 points \+ the current values = 13 runs/m);
  });

  it('gives the same answer on threads', async () => {
    const a = await tuneJson([...CLASH, '--workers', '2']);
    const b = await tuneJson(CLASH);
    expect({ ...a.json, timing: undefined }).toEqual({ ...b.json, timing: undefined });
  }, 15_000);

  it('does not stop at ranges whose ends clash: the clashing corners are refused in the search', async () => {
    // Low ends 30s and 10s clash; plenty of the box does not.
    const { r, json } = await tuneJson([
      '--set',
      'engine.breaker={}',
      '--maximize',
      'goodput',
      '--params',
      'engine.breaker.openMs=30s:60s,engine.breaker.maxOpenMs=10s:120s',
      '--budget',
      '9',
    ]);
    expect(r.code, r.err).toBe(0);
    expect(json.refused.length).toBeGreaterThan(0);
    expect(json.points.length + json.refused.length).toBe(9);
  });

  it('writes no refused field when nothing was refused', async () => {
    const { json } = await tuneJson([...GOAL, '--params', 'engine.retryBudget.ratio', '--budget', '3']);
    expect(json).not.toHaveProperty('refused');
  });
});

describe('stormlab tune when nothing is feasible: exit 1', () => {
  it('names the constraint, shows the least-bad point and no engine block', async () => {
    const { r, json } = await tuneJson([
      '--maximize',
      'goodput',
      '--subject-to',
      'amplification <= 0.9',
      '--params',
      'engine.retryBudget.ratio',
      '--budget',
      '8',
    ]);
    expect(r.code).toBe(1);
    expect(json.feasible).toBe(false);
    expect(r.out).toMatch(
      /^no point met amplification <= 0\.9 \(8 tried\); least bad: engine\.retryBudget\.ratio=0\.01 · amplification <= 0\.9: [\d.]+× FAILED$/m,
    );
    expect(r.out).toContain('no point satisfied the constraints');
    expect(r.out).not.toMatch(/^ {2}engine:$/m);
  });
});

describe('stormlab tune: bad input is exit 2 with one line naming the flag', () => {
  const cases: Array<[string, string[], string]> = [
    [
      'no --params',
      ['--maximize', 'goodput'],
      '--params: give the parameters to tune, e.g. --params engine.throttle.k,engine.retryBudget.ratio',
    ],
    [
      'a knob with no built-in range',
      ['--maximize', 'goodput', '--params', 'engine.budget.ratio'],
      '--params: engine.budget.ratio (did you mean engine.retryBudget.ratio?): no built-in range for it; give a range',
    ],
    [
      'a path with no range',
      ['--maximize', 'goodput', '--params', 'arrival.rate'],
      '--params: arrival.rate: give a range, like arrival.rate=1:10',
    ],
    [
      'a range upside down',
      ['--maximize', 'goodput', '--params', 'engine.throttle.k=4:1'],
      '--params: engine.throttle.k=4:1: the low end must be below the high end',
    ],
    [
      'a range of words',
      ['--maximize', 'goodput', '--params', 'engine.throttle.k=a:b'],
      '--params: engine.throttle.k=a:b: "a" is not a number',
    ],
    [
      'a log range from 0',
      ['--maximize', 'goodput', '--params', 'engine.retryBudget.ratio=0:1:log'],
      '--params: engine.retryBudget.ratio=0:1:log: a log range must be above 0',
    ],
    [
      'an int range with fractions',
      ['--maximize', 'goodput', '--params', 'engine.maxAttempts=0.5:2.5:int'],
      '--params: engine.maxAttempts=0.5:2.5:int: an :int range needs whole ends',
    ],
    [
      'a whole-number knob with a fractional range',
      ['--maximize', 'goodput', '--params', 'engine.maxAttempts=1.5:3'],
      '--params: engine.maxAttempts=1.5:3: maxAttempts is a whole number, so its range needs whole ends',
    ],
    [
      'a log knob with a range from 0',
      ['--maximize', 'goodput', '--params', 'engine.retryBudget.ratio=0:0.5'],
      'a log range must be above 0 (retryBudget.ratio is searched on a log scale; add :linear for an even one)',
    ],
    ['an unknown range flag', ['--maximize', 'goodput', '--params', 'engine.throttle.k=1:2:fast'], '(unknown "fast")'],
    [
      'a duration range that is not one',
      ['--maximize', 'goodput', '--params', 'engine.breaker.openMs=1s:soon'],
      '"soon" is not a duration like 500ms or 2s',
    ],
    [
      'a range the scenario refuses',
      ['--maximize', 'goodput', '--params', 'engine.maxAttempts=0:3'],
      '--params: engine.maxAttempts at 0: engine.maxAttempts: expected an integer from 1 to 100, got 0',
    ],
    [
      'a path the scenario does not have',
      ['--maximize', 'goodput', '--params', 'engine.budget.ratio=0.1:0.2'],
      '--params: engine.budget.ratio at 0.1: engine.budget: unknown key',
    ],
    [
      'a knob of a part the scenario turns off',
      ['--maximize', 'goodput', '--params', 'engine.throttle.k'],
      "engine.throttle is a boolean, not a mapping (engine.throttle: false turns it off; --set 'engine.throttle={}' turns it on with its defaults)",
    ],
    [
      'a parameter twice',
      ['--maximize', 'goodput', '--params', 'engine.maxAttempts,engine.maxAttempts'],
      '--params: engine.maxAttempts is listed twice',
    ],
    [
      'a parameter twice, over two --params',
      ['--maximize', 'goodput', '--params', 'engine.maxAttempts', '--params', 'engine.maxAttempts=1:4'],
      '--params: engine.maxAttempts is listed twice',
    ],
    [
      'an empty parameter',
      ['--maximize', 'goodput', '--params', 'engine.maxAttempts,'],
      '--params: expected a comma-separated list',
    ],
    [
      'no objective',
      ['--params', 'engine.maxAttempts'],
      '--maximize or --minimize: give one metric to optimise, e.g. --maximize goodput',
    ],
    [
      'two objectives',
      ['--maximize', 'goodput', '--minimize', 'amplification', '--params', 'engine.maxAttempts'],
      '--maximize and --minimize: give only one of them',
    ],
    [
      'an unknown objective',
      ['--maximize', 'goodptu', '--params', 'engine.maxAttempts'],
      '--maximize: unknown metric "goodptu" (did you mean goodput?)',
    ],
    [
      'an unknown constraint metric',
      ['--maximize', 'goodput', '--subject-to', 'amplificaton <= 1.2', '--params', 'engine.maxAttempts'],
      '--subject-to "amplificaton <= 1.2": unknown metric "amplificaton" (did you mean amplification?)',
    ],
    [
      'a constraint without an operator',
      ['--maximize', 'goodput', '--subject-to', 'amplification', '--params', 'engine.maxAttempts'],
      '--subject-to "amplification": expected <metric> <op> <value>',
    ],
    [
      'a constraint in the wrong unit',
      ['--maximize', 'goodput', '--subject-to', 'p99 < 20', '--params', 'engine.maxAttempts'],
      '--subject-to "p99 < 20": "20" does not fit p99 (no unit)',
    ],
    [
      'a constraint on a variant not tuned',
      ['--maximize', 'goodput', '--subject-to', 'variants.naive.amplification < 2', '--params', 'engine.maxAttempts'],
      '--subject-to "variants.naive.amplification < 2": tune simulates variant engine only',
    ],
    [
      'a budget of 0',
      ['--maximize', 'goodput', '--budget', '0', '--params', 'engine.maxAttempts'],
      '--budget: expected a whole number of at least 1, got "0"',
    ],
    [
      'workers not a number',
      ['--maximize', 'goodput', '--workers', 'all', '--params', 'engine.maxAttempts'],
      '--workers: expected a whole number of at least 1, or auto, got "all"',
    ],
    [
      'an unknown variant',
      ['--maximize', 'goodput', '--variant', 'engin', '--params', 'engine.maxAttempts'],
      '--variant: unknown variant "engin"',
    ],
    [
      'a bad seed',
      ['--maximize', 'goodput', '--seed', '-1', '--params', 'engine.maxAttempts'],
      '--seed: expected an integer',
    ],
    [
      'a bad duration',
      ['--maximize', 'goodput', '--duration', '10', '--params', 'engine.maxAttempts'],
      '--duration: expected a duration with a unit',
    ],
  ];
  for (const [what, args, message] of cases) {
    it(what, async () => {
      const r = await tune(args);
      expect(r.code).toBe(2);
      expect(r.out).toBe('');
      expect(r.err.split('\n')).toHaveLength(2);
      expect(r.err.startsWith('stormlab: '), r.err).toBe(true);
      expect(r.err).toContain(message);
      expect(r.err).not.toMatch(/^\s+at /m);
    });
  }

  it('a scenario that does not exist', async () => {
    const r = await cli(['tune', 'nope.yaml', ...GOAL, '--params', 'engine.maxAttempts'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.err).toBe('nope.yaml: file not found\n');
  });

  it('a search whose every point the engine refuses, with one line (workers or not)', async () => {
    // Every openMs in 40s–60s is above every maxOpenMs in 10s–30s; each end alone is fine, and so is the baseline.
    const args = [
      '--set',
      'engine.breaker={}',
      '--maximize',
      'goodput',
      '--params',
      'engine.breaker.openMs=40s:60s,engine.breaker.maxOpenMs=10s:30s',
      '--budget',
      '4',
    ];
    for (const workers of ['1', '2']) {
      const r = await tune([...args, '--workers', workers]);
      expect(r.code, r.err).toBe(2);
      expect(r.out).toBe('');
      expect(r.err.trimEnd().split('\n').at(-1)).toMatch(
        /^stormlab: --params: every one of the 4 points is refused, e\.g\. engine\.breaker\.openMs=[\w.]+ engine\.breaker\.maxOpenMs=[\w.]+: engine: breaker\.maxOpenMs must be a duration >= [\w.]+, got [\w.]+$/,
      );
      expect(r.err).not.toMatch(/^\s+at /m);
    }
  }, 15_000);

  it('a --json file that cannot be written', async () => {
    const r = await cli(
      ['tune', 'flaky.yaml', ...GOAL, '--params', 'engine.maxAttempts', '--budget', '1', '--json', 'out.json', '-q'],
      { cwd: dir, writeError: 'ENOENT' },
    );
    expect(r.code).toBe(2);
    expect(r.err).toBe('stormlab: --json: cannot write out.json: its directory does not exist\n');
  });
});

describe('stormlab tune --params, repeated', () => {
  it('adds the lists up, as one comma-separated list would', async () => {
    const { r, json } = await tuneJson([
      ...GOAL,
      '--params',
      'engine.maxAttempts=1:4',
      '--params',
      'engine.retryBudget.ratio',
      '--budget',
      '4',
      '-q',
    ]);
    expect(r.code, r.err).toBe(0);
    expect(json.params.map((p: { path: string }) => p.path)).toEqual([
      'engine.maxAttempts',
      'engine.retryBudget.ratio',
    ]);
  });
});
