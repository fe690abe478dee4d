import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { MetricCatalog } from '../../src/gate/metric-catalog.js';
import { OptionError } from '../../src/engine/errors.js';
import { PointError } from '../../src/explore/point-error.js';
import { isEngineClash, refusalOf } from '../../src/explore/point-refusal.js';
import {
  defaultWorkers,
  isRefused,
  PointPool,
  runPoints,
  workerScript,
  type PointJob,
  type PointOutcome,
} from '../../src/explore/run-points.js';
import type { RunResult } from '../../src/run/metrics/result.js';
import { ScenarioError } from '../../src/scenario/scenario-error.js';
import { runSweep } from '../../src/explore/sweep.js';
import { parseSweepParams } from '../../src/explore/sweep-params.js';
import { sweepText } from '../../src/report/sweep-table.js';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { tempDir } from '../cli/capture-io.js';
import { flakyScenario } from './flaky-scenario.js';

/**
 * One engine layer over an upstream that fails 30 % of calls: the retry budget's ratio decides
 * how many failures are retried into successes, so every point of a ratio sweep differs.
 * 10 s at 20 roots/s: ~20 ms a run.
 */
const FLAKY = flakyScenario();

const dir = tempDir({ 'flaky.yaml': FLAKY });
const job: PointJob = { scenario: 'flaky.yaml', cwd: dir, set: [] };
const RATIOS = [0.02, 0.1, 0.3, 0.6];
const points = RATIOS.map((r) => [`engine.retryBudget.ratio=${r}`]);
/** Each value fine alone, refused together: the engine wants breaker.maxOpenMs >= openMs. */
const CLASH = ['engine.breaker={}', 'engine.breaker.openMs=60s', 'engine.breaker.maxOpenMs=30s'];
/** Not a point at all: reading it throws a TypeError, as a bug would (not a refusal). */
const BROKEN = [null as unknown as string];

/** The runs of outcomes none of which was refused. */
function runsOf(outcomes: PointOutcome[]): RunResult[] {
  expect(outcomes.filter(isRefused)).toEqual([]);
  return outcomes as RunResult[];
}

describe('runPoints', () => {
  it('uses the built worker script', () => {
    // The worker threads run dist/ (built by test/global-setup.ts): a failed build fails here first.
    expect(inject('distBuildError')).toBe('');
    expect(workerScript()).toMatch(/dist[\\/]explore[\\/]run-points-worker\.js$/);
    const beside = pathToFileURL(join(dir, 'run-points.js')).href;
    expect(() => workerScript(beside)).toThrow(
      `the worker script ${join(dir, 'run-points-worker.js')} is missing: build it with npm run build`,
    );
  });

  it('gives the same results, in point order, on one worker (in-process) and on several threads', async () => {
    const seen: number[] = [];
    const one = runsOf(await runPoints(job, points, { workers: 1, onDone: (done) => seen.push(done) }));
    const three = runsOf(await runPoints(job, points, { workers: 3 }));
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(three).toEqual(one);
    // In point order: a bigger budget retries more, so upstream attempts grow along the list.
    const attempts = one.map((r) => r.upstream.attempts);
    expect([...attempts].sort((a, b) => a - b)).toEqual(attempts);
    expect(new Set(attempts).size).toBe(RATIOS.length);
  });

  it('gives the same table for the same grid twice, whatever the workers', async () => {
    const params = parseSweepParams(['engine.retryBudget.ratio=0.05,0.2', 'engine.throttle.k=1.5,3']);
    const scenario = loadScenario(join(dir, 'flaky.yaml'));
    const spec = {
      job,
      scenario: 'flaky',
      variant: 'flaky',
      seed: 7,
      params,
      metric: MetricCatalog.ofScenario(scenario).resolve('goodput'),
      metricText: 'goodput',
      wallNow: () => 0,
    };
    const a = await runSweep({ ...spec, workers: 2 }, runPoints);
    const b = await runSweep({ ...spec, workers: 2 }, runPoints);
    const c = await runSweep({ ...spec, workers: 1 }, runPoints);
    expect(sweepText(b, { color: false })).toBe(sweepText(a, { color: false }));
    expect(c.points).toEqual(a.points);
    expect(new Set(a.points.map((p) => p.figures.goodput)).size).toBeGreaterThan(1);
  });

  it.each([1, 2])(
    'gives back the points whose values are refused, and runs the others (%i workers)',
    async (workers) => {
      const seen: number[] = [];
      const mixed = [points[0], ['engine.throttle.k=0.5'], CLASH, points[1]];
      const out = await runPoints(job, mixed, { workers, onDone: (done) => seen.push(done) });
      expect(out[1]).toEqual({ refused: 'engine.throttle.k: expected a number >= 1 and <= 1000, got 0.5' });
      // The loader blames the last --set for a clash; the refusal leaves that prefix out.
      expect(out[2]).toEqual({ refused: 'engine: breaker.maxOpenMs must be a duration >= 1m, got 30s' });
      expect([out[0], out[3]]).toEqual(await runPoints(job, [points[0], points[1]], { workers: 1 }));
      expect(seen.sort()).toEqual([1, 2, 3, 4]);
    },
    10_000,
  );

  it('refuses every point when the scenario file is gone, on the threads too', async () => {
    const out = await runPoints({ ...job, scenario: 'missing.yaml' }, points.slice(0, 2), { workers: 2 });
    expect(out).toEqual([{ refused: 'file not found' }, { refused: 'file not found' }]);
  }, 10_000);

  it.each([1, 2])(
    'rejects on a point that fails otherwise (a bug), without hanging (%i workers)',
    async (workers) => {
      const err = await runPoints(job, [points[0], BROKEN, points[1]], { workers }).then(
        () => undefined,
        (e: unknown) => e,
      );
      if (workers === 1) expect(err).toBeInstanceOf(TypeError);
      else {
        expect(err).toBeInstanceOf(PointError);
        expect((err as PointError).message).toMatch(/^point 2 of 3 \(.*\): TypeError: /);
      }
    },
    10_000,
  );

  it('checks the worker count', async () => {
    await expect(runPoints(job, points, { workers: 0 })).rejects.toThrow(
      'workers: expected a whole number of at least 1 or auto, got 0',
    );
    await expect(runPoints(job, [], { workers: 2 })).resolves.toEqual([]);
  });
});

describe('PointPool', () => {
  it('keeps its worker threads across batches, and gives what runPoints gives', async () => {
    const pool = new PointPool(job, 2);
    try {
      const first = await pool.run(points.slice(0, 2));
      const second = await pool.run(points.slice(2));
      expect(pool.started).toBe(2);
      expect(runsOf([...first, ...second])).toEqual(await runPoints(job, points, { workers: 1 }));
    } finally {
      await pool.close();
    }
  }, 10_000);

  it('runs again after a failing batch, on new threads', async () => {
    const pool = new PointPool(job, 2);
    try {
      await expect(pool.run([points[0], BROKEN])).rejects.toBeInstanceOf(PointError);
      const again = await pool.run(points.slice(0, 2));
      expect(again).toEqual(await runPoints(job, points.slice(0, 2), { workers: 1 }));
      expect(pool.started).toBe(4);
    } finally {
      await pool.close();
    }
  }, 10_000);
});

describe('PointPool with one point', () => {
  it('runs a batch of one point in this thread: no worker thread starts', async () => {
    const pool = new PointPool(job, 4);
    try {
      const [one] = await pool.run([points[0]]);
      expect(pool.started).toBe(0);
      expect([one]).toEqual(await runPoints(job, [points[0]], { workers: 1 }));
    } finally {
      await pool.close();
    }
  });
});

describe('defaultWorkers', () => {
  it('leaves a core to the main thread: one worker on 2 cores, three on 4', () => {
    expect(defaultWorkers(100, 2)).toBe(1);
    expect(defaultWorkers(100, 4)).toBe(3);
    expect(defaultWorkers(100, 16)).toBe(15);
  });

  it('is at least 1 and at most the number of points', () => {
    expect(defaultWorkers(100, 1)).toBe(1);
    expect(defaultWorkers(3, 16)).toBe(3);
    expect(defaultWorkers(1, 16)).toBe(1);
    expect(defaultWorkers(0, 16)).toBe(1);
  });

  it('reads the cores of this host when not told', () => {
    expect(defaultWorkers(1000)).toBe(Math.max(1, availableParallelism() - 1));
  });
});

describe('refusalOf', () => {
  it('reads a refusal from the scenario loader or the engine on one line, and nothing else', () => {
    expect(refusalOf(new ScenarioError('flaky.yaml', ['--set "a.b=1": a: x', 'c: y']))).toBe('a: x; c: y');
    const clash = new OptionError('breaker.maxOpenMs must be a number >= 60000, got 30000', 'breaker.maxOpenMs');
    expect(refusalOf(clash)).toBe('engine: breaker.maxOpenMs must be a number >= 60000, got 30000');
    // the guard's own options read as the scenario's engine keys
    const own = new OptionError('guard.maxAttempts must be an integer from 1 to 100, got 0', 'guard.maxAttempts');
    expect(refusalOf(own)).toBe('engine: maxAttempts must be an integer from 1 to 100, got 0');
    expect(refusalOf(new TypeError('x is undefined'))).toBeUndefined();
  });
});

describe('isEngineClash', () => {
  it("tells the engine's verdict on options together from a value wrong alone", () => {
    expect(
      isEngineClash(
        '--set "engine.breaker.maxOpenMs=30s": engine: breaker.maxOpenMs must be a number >= 60000, got 30000',
      ),
    ).toBe(true);
    expect(isEngineClash('layers[1].retry.engine: backoff.capMs must be a number >= 5000, got 1000')).toBe(true);
    expect(
      isEngineClash('--set "engine.throttle.k=0.5": engine.throttle.k: expected a number from 1 to 1000, got 0.5'),
    ).toBe(false);
    expect(isEngineClash('--set "engine=5": engine: expected a mapping of engine options, got 5')).toBe(false);
    expect(isEngineClash('tokens.prompt.max: expected at least min (250), got 200')).toBe(false);
  });
});
