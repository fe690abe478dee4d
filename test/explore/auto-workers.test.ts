import { describe, expect, it } from 'vitest';
import {
  autoWorkers,
  isRefused,
  PointPool,
  runPoints,
  THREAD_STARTUP_MS,
  type PointJob,
  type WorkerChoice,
} from '../../src/explore/run-points.js';
import { tempDir } from '../cli/capture-io.js';
import { flakyScenario } from './flaky-scenario.js';

const dir = tempDir({ 'flaky.yaml': flakyScenario() });
const job: PointJob = { scenario: 'flaky.yaml', cwd: dir, set: [] };
/** More points than `auto` ever measures here (PROBE_POINTS), so some are always left for threads. */
const points = [0.02, 0.05, 0.1, 0.2, 0.3, 0.45, 0.6, 0.9].map((r) => [`engine.retryBudget.ratio=${r}`]);

describe('--workers auto', () => {
  it('keeps light points in this thread and spreads heavy ones over the cores', () => {
    // 12 points of 20 ms: 240 ms of work, less than a thread takes to start.
    expect(autoWorkers(20, 12, 2)).toBe(1);
    // 12 points of 2 s on 2 cores: 24 s alone, ~19 s on two threads — worth it.
    expect(autoWorkers(2000, 12, 2)).toBe(2);
    expect(autoWorkers(2000, 12, 8)).toBe(8);
    // Never more threads than points, none on one core or for one point.
    expect(autoWorkers(2000, 3, 8)).toBe(3);
    expect(autoWorkers(60_000, 12, 1)).toBe(1);
    expect(autoWorkers(60_000, 1, 8)).toBe(1);
  });

  it('goes parallel only past a margin over the threads’ start-up, so it is never slower than one worker', () => {
    // On 2 cores the threads must save a fifth of the serial time after paying their start-up.
    let n = 1;
    while (autoWorkers(100, n, 2) === 1) n++;
    const serial = 100 * n;
    expect(THREAD_STARTUP_MS + serial / (2 * 0.65)).toBeLessThan(0.8 * serial);
    const before = 100 * (n - 1);
    expect(THREAD_STARTUP_MS + before / (2 * 0.65)).toBeGreaterThanOrEqual(0.8 * before);
  });

  it('measures the first points here, says what it chose, and gives the results of one worker', async () => {
    const one = await runPoints(job, points, { workers: 1 });
    const choices: WorkerChoice[] = [];
    const auto = await runPoints(job, points, { workers: 'auto', onWorkers: (c) => choices.push(c) });
    expect(auto).toEqual(one);
    expect(choices).toHaveLength(1);
    expect(choices[0].auto).toBe(true);
    expect(choices[0].pointMs).toBeGreaterThan(0);
    expect(one.some(isRefused)).toBe(false);
  });

  it('runs the rest on threads when it decides so: same outcomes in point order, progress counted through', async () => {
    const one = await runPoints(job, points, { workers: 1 });
    const pool = new PointPool(job, 'auto', 2, () => 2);
    const seen: number[] = [];
    const choices: WorkerChoice[] = [];
    try {
      const out = await pool.run(
        points,
        (done) => seen.push(done),
        (c) => choices.push(c),
      );
      expect(out).toEqual(one);
      expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(choices).toEqual([{ used: 2, auto: true, pointMs: expect.any(Number) }]);
      expect(pool.used).toBe(2);
      expect(pool.started).toBe(2);
      // A later batch (a tuner's next round) keeps the choice and says so as a given count.
      const again = await pool.run(points.slice(0, 3), undefined, (c) => choices.push(c));
      expect(again).toEqual(one.slice(0, 3));
      expect(choices[1]).toEqual({ used: 2, auto: false });
    } finally {
      await pool.close();
    }
  }, 30_000);
});
