import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { MetricCatalog } from '../../src/gate/metric-catalog.js';
import { PointError } from '../../src/explore/point-error.js';
import { isBadPoint, PointPool, runPoints, workerScript, type PointJob } from '../../src/explore/run-points.js';
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

describe('runPoints', () => {
  it('uses the built worker script', () => {
    // The worker threads run dist/ (built by test/global-setup.ts): a failed build fails here first.
    expect(inject('distBuildError')).toBe('');
    expect(workerScript()).toMatch(/dist[\\/]explore[\\/]run-points-worker\.js$/);
    const beside = pathToFileURL(join(dir, 'run-points.js')).href;
    expect(() => workerScript(beside)).toThrow(`the worker script ${join(dir, 'run-points-worker.js')} is missing: build it with npm run build`);
  });

  it('gives the same results, in point order, on one worker (in-process) and on several threads', async () => {
    const seen: number[] = [];
    const one = await runPoints(job, points, { workers: 1, onDone: (done) => seen.push(done) });
    const three = await runPoints(job, points, { workers: 3 });
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
    const spec = { job, scenario: 'flaky', variant: 'flaky', seed: 7, params, metric: MetricCatalog.ofScenario(scenario).resolve('goodput'), metricText: 'goodput', wallNow: () => 0 };
    const a = await runSweep({ ...spec, workers: 2 }, runPoints);
    const b = await runSweep({ ...spec, workers: 2 }, runPoints);
    const c = await runSweep({ ...spec, workers: 1 }, runPoints);
    expect(sweepText(b, { color: false })).toBe(sweepText(a, { color: false }));
    expect(c.points).toEqual(a.points);
    expect(new Set(a.points.map((p) => p.figures.goodput)).size).toBeGreaterThan(1);
  });

  it.each([1, 2])('rejects on a failing point, naming it, without hanging (%i workers)', async (workers) => {
    const bad = [points[0], ['engine.throttle.k=0.5'], points[1], points[2]];
    const err = await runPoints(job, bad, { workers }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(PointError);
    expect(isBadPoint(err)).toBe(true);
    expect((err as PointError).message).toBe('point 2 of 4 (engine.throttle.k=0.5): --set "engine.throttle.k=0.5": engine.throttle.k: expected a number from 1 to 1000, got 0.5');
  }, 10_000);

  it('rejects when a scenario file is gone, on the threads too', async () => {
    const err = await runPoints({ ...job, scenario: 'missing.yaml' }, points.slice(0, 2), { workers: 2 }).catch((e: unknown) => e);
    expect(isBadPoint(err)).toBe(true);
    expect((err as Error).message).toMatch(/^point \d of 2 \(engine\.retryBudget\.ratio=0\.0?[12]\): file not found$/);
  }, 10_000);

  it('checks the worker count', async () => {
    await expect(runPoints(job, points, { workers: 0 })).rejects.toThrow('workers: expected a whole number of at least 1, got 0');
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
      expect([...first, ...second]).toEqual(await runPoints(job, points, { workers: 1 }));
    } finally {
      await pool.close();
    }
  }, 10_000);

  it('runs again after a failing batch, on new threads', async () => {
    const pool = new PointPool(job, 2);
    try {
      await expect(pool.run([points[0], ['engine.throttle.k=0.5']])).rejects.toBeInstanceOf(PointError);
      const again = await pool.run(points.slice(0, 2));
      expect(again).toEqual(await runPoints(job, points.slice(0, 2), { workers: 1 }));
      expect(pool.started).toBe(4);
    } finally {
      await pool.close();
    }
  }, 10_000);
});
