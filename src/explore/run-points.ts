import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { initHistograms } from '../run/metrics/histogram.js';
import { PointError } from './point-error.js';
import type { PointOutcome } from './point-refusal.js';
import { pointOutcome, type PointJob } from './simulate-point.js';

export type { PointJob } from './simulate-point.js';
export { isRefused, type PointOutcome, type RefusedPoint } from './point-refusal.js';

export interface RunPointsOptions {
  /** Simulations at once: 1 runs them in this thread, more in that many worker threads (at most one per point). */
  workers: number;
  /** After each point finishes (in the order they finish). */
  onDone?: (done: number, total: number) => void;
}

/** `runPoints`' shape, for callers that take a stand-in in tests. */
export type RunPointsFn = (job: PointJob, points: string[][], opts: RunPointsOptions) => Promise<PointOutcome[]>;

/** What the main thread sends a worker, and what it answers. */
export interface PointRequest {
  index: number;
  sets: string[];
}
export type PointReply =
  | { index: number; result: PointOutcome }
  | { index: number; error: { message: string; code?: string } };

/**
 * The worker threads a batch of `points` gets unless `--workers` says otherwise: one core less
 * than there are, at least one, and no more than there are points. Simulations are CPU-bound,
 * but the main thread is busy too (it hands out points, collects results, draws progress) and
 * threads share the memory bandwidth: on a 2-vCPU host two workers ran at about one core's
 * throughput, slower than one worker in this thread, which pays no start-up. One worker (or
 * one point) runs in this thread: no pool at all.
 */
export function defaultWorkers(points: number, cores: number = availableParallelism()): number {
  return Math.max(1, Math.min(cores - 1, points));
}

/**
 * Simulates every point (its `--set` texts on top of the job's) and returns the outcomes in
 * point order, whichever worker ran which. Every point has the job's seed, so the outcomes are
 * the same for any number of workers. A point whose values are refused (see `RefusedPoint`)
 * comes back as such and the others still run; a point that fails otherwise (a bug) rejects
 * with a `PointError` naming it, after stopping the other workers.
 */
export async function runPoints(job: PointJob, points: string[][], opts: RunPointsOptions): Promise<PointOutcome[]> {
  const pool = new PointPool(job, Math.max(1, Math.min(checkWorkers(opts.workers), points.length)));
  try {
    return await pool.run(points, opts.onDone);
  } finally {
    await pool.close();
  }
}

function checkWorkers(n: number): number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`workers: expected a whole number of at least 1, got ${n}`);
  return n;
}

interface Batch {
  points: string[][];
  results: PointOutcome[];
  next: number;
  done: number;
  onDone: RunPointsOptions['onDone'];
  resolve: (r: PointOutcome[]) => void;
  reject: (e: unknown) => void;
}

interface Slot {
  worker: Worker;
  /** The index of the point it is simulating, -1 when idle. */
  current: number;
  /** Stopped by `close()`: whatever it still says (its exit) concerns no batch. */
  closed: boolean;
}

/**
 * `runPoints` for callers that run several batches of the same job (the tuner's rounds): the
 * worker threads start once, on the first batch, and stay until `close()`, so each round does
 * not pay their start-up (loading the modules, warming the JIT: ~0.5 s a worker). One worker
 * runs the points in this thread. Batches run one at a time.
 */
export class PointPool {
  private readonly slots: Slot[] = [];
  private batch: Batch | undefined;
  /** Worker threads started so far (they are restarted only after a failure stopped them). */
  started = 0;

  constructor(
    private readonly job: PointJob,
    private readonly size: number,
  ) {
    checkWorkers(size);
  }

  run(points: string[][], onDone?: RunPointsOptions['onDone']): Promise<PointOutcome[]> {
    if (this.batch !== undefined) return Promise.reject(new Error('PointPool.run: a batch is already running'));
    if (this.size <= 1 || points.length <= 1) return runHere(this.job, points, onDone);
    return new Promise((resolve, reject) => {
      this.batch = { points, results: new Array(points.length), next: 0, done: 0, onDone, resolve, reject };
      while (this.slots.length < Math.min(this.size, points.length)) this.slots.push(this.spawn());
      for (const slot of this.slots) this.feed(slot);
    });
  }

  /** Stops the worker threads. */
  async close(): Promise<void> {
    const slots = this.slots.splice(0);
    for (const slot of slots) slot.closed = true;
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private spawn(): Slot {
    this.started++;
    const slot: Slot = {
      worker: new Worker(workerScript(), { workerData: { job: this.job } }),
      current: -1,
      closed: false,
    };
    slot.worker.on('message', (m: PointReply) => slot.closed || this.answered(slot, m));
    slot.worker.on('error', (e) => slot.closed || this.failAt(slot.current, e.stack ?? e.message, undefined, e));
    slot.worker.on('exit', (code) => {
      if (slot.closed) return;
      const i = this.slots.indexOf(slot);
      if (i >= 0) this.slots.splice(i, 1);
      if (slot.current >= 0) this.failAt(slot.current, `its worker thread stopped (exit code ${code})`);
    });
    return slot;
  }

  private feed(slot: Slot): void {
    const b = this.batch;
    slot.current = b !== undefined && b.next < b.points.length ? b.next++ : -1;
    if (slot.current >= 0)
      slot.worker.postMessage({ index: slot.current, sets: b!.points[slot.current] } satisfies PointRequest);
  }

  private answered(slot: Slot, m: PointReply): void {
    const b = this.batch;
    if (b === undefined) return;
    if ('error' in m) return this.failAt(m.index, m.error.message, m.error.code);
    b.results[m.index] = m.result;
    slot.current = -1;
    b.done++;
    try {
      b.onDone?.(b.done, b.points.length);
    } catch (e) {
      return this.fail(e);
    }
    if (b.done < b.points.length) return this.feed(slot);
    this.batch = undefined;
    b.resolve(b.results);
  }

  private failAt(index: number, detail: string, code?: string, error?: unknown): void {
    const b = this.batch;
    if (b === undefined) return;
    this.fail(index >= 0 ? new PointError(index, b.points.length, b.points[index], detail, code) : error);
  }

  /** The first failure rejects the batch and stops every worker: nothing waits on a dead one. */
  private fail(e: unknown): void {
    const b = this.batch;
    if (b === undefined) return;
    this.batch = undefined;
    void this.close();
    b.reject(e);
  }
}

async function runHere(job: PointJob, points: string[][], onDone: RunPointsOptions['onDone']): Promise<PointOutcome[]> {
  await initHistograms();
  const results: PointOutcome[] = [];
  for (const sets of points) {
    results.push(pointOutcome(job, sets));
    onDone?.(results.length, points.length);
  }
  return results;
}

/**
 * The worker script. Built, this module is `dist/explore/run-points.js` and the worker sits
 * beside it. Under vitest this module is the TypeScript source, which a Node 20 worker cannot
 * load, so the built copy in `dist/` stands in (test/global-setup.ts builds it before tests).
 */
export function workerScript(here: string = import.meta.url): string {
  const url = here.endsWith('.js')
    ? new URL('./run-points-worker.js', here)
    : new URL('../../dist/explore/run-points-worker.js', here);
  const file = fileURLToPath(url);
  if (!existsSync(file)) throw new Error(`the worker script ${file} is missing: build it with npm run build`);
  return file;
}
