import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { initHistograms } from '../run/metrics/histogram.js';
import type { RunResult } from '../run/metrics/result.js';
import { ScenarioError } from '../scenario/scenario-error.js';
import { PointError } from './point-error.js';
import { simulatePoint, type PointJob } from './simulate-point.js';

export type { PointJob } from './simulate-point.js';

/** The code of a `ScenarioError`, as it crosses from a worker. */
const SCENARIO_ERROR = 'ERR_STORMLAB_SCENARIO';

export interface RunPointsOptions {
  /** Simulations at once: 1 runs them in this thread, more in that many worker threads (at most one per point). */
  workers: number;
  /** After each point finishes (in the order they finish). */
  onDone?: (done: number, total: number) => void;
}

/** `runPoints`' shape, for callers that take a stand-in in tests. */
export type RunPointsFn = (job: PointJob, points: string[][], opts: RunPointsOptions) => Promise<RunResult[]>;

/** What the main thread sends a worker, and what it answers. */
export interface PointRequest {
  index: number;
  sets: string[];
}
export type PointReply = { index: number; result: RunResult } | { index: number; error: { message: string; code?: string } };

/** One worker per core: simulations are CPU-bound and share nothing. */
export function defaultWorkers(): number {
  return availableParallelism();
}

/**
 * Simulates every point (its `--set` texts on top of the job's) and returns the results in
 * point order, whichever worker ran which. Every point has the job's seed, so the results are
 * the same for any number of workers. A point that fails rejects with a `PointError` naming
 * it, after stopping the other workers.
 */
export async function runPoints(job: PointJob, points: string[][], opts: RunPointsOptions): Promise<RunResult[]> {
  if (!Number.isInteger(opts.workers) || opts.workers < 1) throw new RangeError(`workers: expected a whole number of at least 1, got ${opts.workers}`);
  const workers = Math.min(opts.workers, points.length);
  if (workers <= 1) return runHere(job, points, opts.onDone);
  return runInWorkers(job, points, workers, opts.onDone);
}

async function runHere(job: PointJob, points: string[][], onDone: RunPointsOptions['onDone']): Promise<RunResult[]> {
  await initHistograms();
  const results: RunResult[] = [];
  for (const [i, sets] of points.entries()) {
    try {
      results.push(simulatePoint(job, sets));
    } catch (e) {
      if (e instanceof ScenarioError) throw new PointError(i, points.length, sets, e.problems.join('; '), e.code);
      throw e;
    }
    onDone?.(i + 1, points.length);
  }
  return results;
}

/**
 * The worker script. Built, this module is `dist/explore/run-points.js` and the worker sits
 * beside it. Under vitest this module is the TypeScript source, which a Node 20 worker cannot
 * load, so the built copy in `dist/` stands in (test/global-setup.ts builds it before tests).
 */
export function workerScript(here: string = import.meta.url): string {
  const url = here.endsWith('.js') ? new URL('./run-points-worker.js', here) : new URL('../../dist/explore/run-points-worker.js', here);
  const file = fileURLToPath(url);
  if (!existsSync(file)) throw new Error(`the worker script ${file} is missing: build it with npm run build`);
  return file;
}

/**
 * A queue over `n` worker threads: each is handed the next point as it finishes one. The
 * first failure (an error answer, a crash, an unexpected exit) rejects, naming the point the
 * worker had, and terminates every worker; nothing waits on a dead one.
 */
function runInWorkers(job: PointJob, points: string[][], n: number, onDone: RunPointsOptions['onDone']): Promise<RunResult[]> {
  const script = workerScript();
  return new Promise((resolve, reject) => {
    const results: RunResult[] = new Array(points.length);
    const workers: Worker[] = [];
    let next = 0;
    let done = 0;
    let settled = false;
    const stopAll = (): void => workers.forEach((w) => void w.terminate());
    const fail = (e: unknown): void => {
      if (settled) return;
      settled = true;
      stopAll();
      reject(e);
    };
    const failAt = (index: number, detail: string, code?: string): void => fail(new PointError(index, points.length, points[index], detail, code));
    for (let k = 0; k < n; k++) {
      const worker = new Worker(script, { workerData: { job } });
      workers.push(worker);
      let current = -1;
      const feed = (): void => {
        current = next < points.length ? next++ : -1;
        if (current >= 0) worker.postMessage({ index: current, sets: points[current] } satisfies PointRequest);
      };
      worker.on('message', (m: PointReply) => {
        if (settled) return;
        if ('error' in m) return failAt(m.index, m.error.message, m.error.code);
        results[m.index] = m.result;
        current = -1;
        done++;
        try {
          onDone?.(done, points.length);
        } catch (e) {
          return fail(e);
        }
        if (done === points.length) {
          settled = true;
          stopAll();
          resolve(results);
        } else feed();
      });
      worker.on('error', (e) => (current >= 0 ? failAt(current, e.stack ?? e.message) : fail(e)));
      worker.on('exit', (code) => {
        if (current >= 0) failAt(current, `its worker thread stopped (exit code ${code})`);
      });
      feed();
    }
  });
}

/** Whether an error from `runPoints` is the user's to fix: a point whose values make a scenario that does not validate. */
export function isBadPoint(e: unknown): e is PointError {
  return e instanceof PointError && e.causeCode === SCENARIO_ERROR;
}
