import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { PointError } from './point-error.js';
import type { PointOutcome } from './point-refusal.js';
import { pointOutcome, type PointJob } from './simulate-point.js';

export type { PointJob } from './simulate-point.js';
export { isRefused, type PointOutcome, type RefusedPoint } from './point-refusal.js';

/** How many simulations run at once: a number, or `auto` (decided from the cost of the first points, see `autoWorkers`). */
export type WorkerCount = number | 'auto';

/** What `auto` chose, and why: `1 worker (a point takes 12 ms: threads would not pay)`. */
export interface WorkerChoice {
  /** Workers actually used: 1 runs in this thread, more are worker threads. */
  used: number;
  /** Whether `auto` chose it (else it is what was asked, capped by the points). */
  auto: boolean;
  /** The measured wall ms of one point in this thread, when `auto` measured it. */
  pointMs?: number;
}

export interface RunPointsOptions {
  /** Simulations at once: 1 runs them in this thread, more in that many worker threads (at most one per point). */
  workers: WorkerCount;
  /** After each point finishes (in the order they finish). */
  onDone?: (done: number, total: number) => void;
  /** Once the number of workers is known (for `auto`, after the first points ran here). */
  onWorkers?: (choice: WorkerChoice) => void;
  /**
   * Stops the batch (SIGINT, SIGTERM): no further point starts, the worker threads stop, and it
   * rejects with the signal's reason. Points in this thread look at it between points.
   */
  signal?: AbortSignal;
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
 * What a worker thread costs before its first point: loading the modules and warming the JIT,
 * measured at 0.3–0.6 s on a 2-vCPU host (threads start together, so once for the pool).
 */
export const THREAD_STARTUP_MS = 500;
/**
 * The share of a core each of several threads gets for simulations (they share memory
 * bandwidth and caches, and the host's other work): on 2 vCPUs two threads ran 1.3× as fast
 * as one, 0.65 each.
 */
export const THREAD_EFFICIENCY = 0.65;
/** How long `auto` measures points in this thread before deciding (at least one point, at most `PROBE_POINTS`). */
export const PROBE_MS = 200;
const PROBE_POINTS = 4;

/**
 * `--workers auto`: the worker threads for `remaining` points of `pointMs` each (measured in
 * this thread), given the cores. Threads run only when they finish sooner, by a margin, than
 * this thread alone: their start-up plus the points spread over them at `THREAD_EFFICIENCY`
 * must beat the points one after another by a fifth, so light points (or few) stay here and
 * `auto` is never slower than one worker by more than the probe it measured with.
 */
export function autoWorkers(pointMs: number, remaining: number, cores: number = availableParallelism()): number {
  const threads = Math.min(cores, remaining);
  if (threads < 2) return 1;
  const serial = pointMs * remaining;
  const parallel = THREAD_STARTUP_MS + serial / (threads * THREAD_EFFICIENCY);
  return parallel < 0.8 * serial ? threads : 1;
}

/**
 * Simulates every point (its `--set` texts on top of the job's) and returns the outcomes in
 * point order, whichever worker ran which. Every point has the job's seed, so the outcomes are
 * the same for any number of workers. A point whose values are refused (see `RefusedPoint`)
 * comes back as such and the others still run; a point that fails otherwise (a bug) rejects
 * with a `PointError` naming it, after stopping the other workers.
 */
export async function runPoints(job: PointJob, points: string[][], opts: RunPointsOptions): Promise<PointOutcome[]> {
  const w = checkWorkers(opts.workers);
  const pool = new PointPool(job, w === 'auto' ? w : Math.max(1, Math.min(w, points.length)));
  try {
    return await pool.run(points, opts.onDone, opts.onWorkers, opts.signal);
  } finally {
    await pool.close();
  }
}

function checkWorkers(n: WorkerCount): WorkerCount {
  if (n !== 'auto' && (!Number.isInteger(n) || n < 1))
    throw new RangeError(`workers: expected a whole number of at least 1 or auto, got ${n}`);
  return n;
}

interface Batch {
  points: string[][];
  /** Where `points[0]` sits in the caller's batch (after the points `auto` ran here). */
  offset: number;
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
 *
 * With `auto`, the first batch's first points run in this thread while their cost is measured
 * (see `autoWorkers`); the rest of it, and every later batch, run on what was chosen.
 */
export class PointPool {
  private readonly slots: Slot[] = [];
  private batch: Batch | undefined;
  private size: WorkerCount;
  /** Worker threads started so far (they are restarted only after a failure stopped them). */
  started = 0;
  /** The most workers any batch used: what `timing.workers` reports. */
  used = 0;

  constructor(
    private readonly job: PointJob,
    size: WorkerCount,
    private readonly cores: number = availableParallelism(),
    /** How `auto` decides from the measured cost (tests pass a fixed answer). */
    private readonly decide: typeof autoWorkers = autoWorkers,
  ) {
    this.size = checkWorkers(size);
  }

  async run(
    points: string[][],
    onDone?: RunPointsOptions['onDone'],
    onWorkers?: RunPointsOptions['onWorkers'],
    signal?: AbortSignal,
  ): Promise<PointOutcome[]> {
    if (this.batch !== undefined) throw new Error('PointPool.run: a batch is already running');
    signal?.throwIfAborted();
    if (points.length === 0) return [];
    let head: PointOutcome[] = [];
    if (this.size === 'auto') {
      const probe = await probeHere(this.job, points, onDone, signal);
      head = probe.results;
      this.size = this.decide(probe.pointMs, points.length - head.length, this.cores);
      onWorkers?.({ used: this.size, auto: true, pointMs: probe.pointMs });
    } else onWorkers?.({ used: Math.min(this.size, points.length), auto: false });
    const rest = points.slice(head.length);
    const size = this.size;
    this.used = Math.max(this.used, Math.min(size, Math.max(1, rest.length)));
    if (rest.length === 0) return head;
    const progress =
      onDone === undefined ? undefined : (done: number): void => onDone(head.length + done, points.length);
    if (size <= 1 || rest.length <= 1) return [...head, ...(await runHere(this.job, rest, progress, signal))];
    const onAbort = (): void => this.fail(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const tail = await new Promise<PointOutcome[]>((resolve, reject) => {
      this.batch = {
        points: rest,
        offset: head.length,
        results: new Array(rest.length),
        next: 0,
        done: 0,
        onDone: progress,
        resolve,
        reject,
      };
      while (this.slots.length < Math.min(size, rest.length)) this.slots.push(this.spawn());
      for (const slot of this.slots) this.feed(slot);
    }).finally(() => signal?.removeEventListener('abort', onAbort));
    return [...head, ...tail];
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
      b.onDone?.(b.done, b.points.length + b.offset);
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
    this.fail(
      index >= 0 ? new PointError(b.offset + index, b.offset + b.points.length, b.points[index], detail, code) : error,
    );
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

/**
 * Runs the points in this thread, one after another. Between points it gives the event loop a
 * turn, so a signal is heard (a stop is seen within one point, not after the whole batch).
 */
async function runHere(
  job: PointJob,
  points: string[][],
  onDone: RunPointsOptions['onDone'],
  signal: AbortSignal | undefined,
): Promise<PointOutcome[]> {
  const results: PointOutcome[] = [];
  for (const sets of points) {
    await turn(signal);
    results.push(pointOutcome(job, sets));
    onDone?.(results.length, points.length);
  }
  return results;
}

/** One turn of the event loop (timers, signals, I/O), then a stop asked meanwhile rejects. */
async function turn(signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return;
  await new Promise((done) => setImmediate(done));
  signal.throwIfAborted();
}

/**
 * Runs the first points in this thread until `PROBE_MS` have passed (or `PROBE_POINTS` ran):
 * their results count, and their mean wall time is the cost `auto` decides by. The first point
 * pays this thread's JIT warm-up, so a thread's points are, if anything, cheaper than measured.
 */
async function probeHere(
  job: PointJob,
  points: string[][],
  onDone: RunPointsOptions['onDone'],
  signal: AbortSignal | undefined,
): Promise<{ results: PointOutcome[]; pointMs: number }> {
  const results: PointOutcome[] = [];
  const start = performance.now();
  while (results.length < points.length && results.length < PROBE_POINTS) {
    await turn(signal);
    results.push(pointOutcome(job, points[results.length]));
    onDone?.(results.length, points.length);
    if (performance.now() - start >= PROBE_MS) break;
  }
  return { results, pointMs: (performance.now() - start) / results.length };
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
