import { randomUUID } from 'node:crypto';
import { basename, resolve } from 'node:path';
import type { Queue, QueueEvents } from 'bullmq';
import { BUNDLED_DIR, resolveScenarioPath } from '../scenario/bundled.js';
import { readBoundedFile, SCENARIO_MAX_BYTES } from '../scenario/read-bounded-file.js';
import { PointError } from './point-error.js';
import type { PointOutcome } from './point-refusal.js';
import type { RunPointsOptions } from './run-points.js';
import { loadBullmq, type QueueTarget } from './queue-target.js';
import { QueueLostError, type QueueWatch, watchQueue } from './queue-watch.js';
import type { PointJob } from './simulate-point.js';

/**
 * One point on the queue: everything a worker on another machine needs, with the scenario's
 * text itself (that machine has not got the file), under the file's own name (so it parses
 * as YAML or JSON as it would here).
 */
export interface QueuedPoint {
  scenario: { file: string; text: string };
  set: string[];
  variant?: string;
  sets: string[];
}

/** What a worker sends back: the outcome, and who ran it (so the coordinator can count machines). */
export interface QueuedAnswer {
  outcome: PointOutcome;
  worker: string;
}

/** How long a batch waits for a point before it gives up (no worker listening, or one died holding it). */
export const QUEUE_POINT_TIMEOUT_MS = 10 * 60_000;

/**
 * The scenario of a job as it travels: the file's text (a bundled name resolved as `run`
 * resolves it), so every worker simulates exactly what the coordinator checked.
 */
export function queuedScenario(job: PointJob): QueuedPoint['scenario'] {
  const arg = job.scenario;
  const path = resolveScenarioPath(arg.includes('/') || arg.includes('.') ? resolve(job.cwd, arg) : arg, BUNDLED_DIR);
  // Read as the loader read it (a regular file, bounded): what is checked is what travels.
  return { file: basename(path), text: readBoundedFile(path, SCENARIO_MAX_BYTES) };
}

/**
 * `runPoints` over a BullMQ queue: each batch's points become jobs any `stormlab worker` takes
 * (on this machine or others); the outcomes come back in point order. Every point carries its
 * seed in its `--set`s, so the outcomes are those of a local run, whoever ran them.
 */
export class QueueRunner {
  /** The workers (host, process, thread) that ran at least one point. */
  readonly workers = new Set<string>();
  private waiting = new Map<
    string,
    { resolve: (a: QueuedAnswer) => void; reject: (reason: string | Error) => void; job: BulkJob }
  >();
  /** Set once Redis was away longer than the wait: every batch fails with it. */
  private lost: QueueLostError | undefined;

  private constructor(
    private readonly queue: Queue,
    private readonly events: QueueEvents,
    private readonly job: PointJob,
    private readonly scenario: QueuedPoint['scenario'],
    private readonly watch: QueueWatch,
    relay: WatchRelay,
    private readonly batchId: string = randomUUID(),
  ) {
    events.on('completed', ({ jobId, returnvalue }) => {
      const answer = (typeof returnvalue === 'string' ? JSON.parse(returnvalue) : returnvalue) as QueuedAnswer;
      this.waiting.get(jobId)?.resolve(answer);
    });
    events.on('failed', ({ jobId, failedReason }) => this.waiting.get(jobId)?.reject(failedReason));
    // Redis may have come back empty (a restart): what is still unanswered goes on the queue
    // again, under the same ids (a job Redis kept is not doubled; one run twice is answered once).
    relay.back = () => void this.requeue();
    relay.lost = (e) => {
      this.lost = e;
      for (const w of [...this.waiting.values()]) w.reject(e);
    };
  }

  static async open(target: QueueTarget, job: PointJob, wait: QueueWaitOptions): Promise<QueueRunner> {
    const scenario = queuedScenario(job);
    const { Queue, QueueEvents } = await loadBullmq();
    const queue = new Queue(target.name, { connection: target.connection });
    const events = new QueueEvents(target.name, { connection: target.connection });
    // Their clients reconnect by themselves; each failed attempt is an 'error' event, which
    // BullMQ prints with its stack when no one listens. The watch says it once instead.
    queue.on('error', ignore);
    events.on('error', ignore);
    // Watched from the start: Redis may go while BullMQ is still connecting, which then waits for it.
    const relay: WatchRelay = { back: ignore, lost: ignore };
    const lostEarly = new Promise<never>((_, reject) => {
      relay.lost = reject;
    });
    const watch = watchQueue(target, {
      waitMs: wait.waitMs,
      say: wait.say,
      onBack: () => relay.back(),
      onLost: (e) => relay.lost(e),
    });
    try {
      await Promise.race([Promise.all([queue.waitUntilReady(), events.waitUntilReady()]), lostEarly]);
    } catch (e) {
      watch.stop();
      await closeBounded(queue, events);
      throw e;
    }
    return new QueueRunner(queue, events, job, scenario, watch, relay);
  }

  private async requeue(): Promise<void> {
    const jobs = [...this.waiting.values()].map((w) => w.job);
    if (jobs.length > 0) await this.queue.addBulk(jobs).catch(ignore);
  }

  /** Puts the points on the queue and waits for all of them; the first failure rejects (a bug, as with threads). */
  async run(points: string[][], onDone?: RunPointsOptions['onDone']): Promise<PointOutcome[]> {
    const batch = `${this.batchId}:${randomUUID().slice(0, 8)}`;
    const jobs: BulkJob[] = points.map((sets, index) => ({
      name: 'point',
      data: { scenario: this.scenario, set: this.job.set, variant: this.job.variant, sets },
      opts: { jobId: `${batch}:${index}`, removeOnComplete: true, removeOnFail: true, attempts: 1 },
    }));
    let done = 0;
    const answers = points.map((sets, index) => {
      const id = `${batch}:${index}`;
      return new Promise<PointOutcome>((resolve, reject) => {
        const timer = setTimeout(
          () =>
            finish(() =>
              reject(
                new PointError(
                  index,
                  points.length,
                  sets,
                  `no worker answered within ${QUEUE_POINT_TIMEOUT_MS / 60_000} min`,
                ),
              ),
            ),
          QUEUE_POINT_TIMEOUT_MS,
        );
        const finish = (fn: () => void): void => {
          clearTimeout(timer);
          this.waiting.delete(id);
          fn();
        };
        this.waiting.set(id, {
          resolve: (a) =>
            finish(() => {
              this.workers.add(a.worker);
              resolve(a.outcome);
              onDone?.(++done, points.length);
            }),
          reject: (reason) =>
            finish(() =>
              reject(
                reason instanceof QueueLostError
                  ? reason
                  : new PointError(index, points.length, sets, reason instanceof Error ? reason.message : reason),
              ),
            ),
          job: jobs[index],
        });
      });
    });
    if (this.lost !== undefined) for (const w of [...this.waiting.values()]) w.reject(this.lost);
    // Not awaited on its own: with Redis away the client holds the command until it is back
    // (then it goes), or until the watch gives up (then the batch fails without it). A failure
    // to add while Redis is away is made good when it is back (`requeue`).
    this.queue.addBulk(jobs).catch((e: unknown) => {
      if (this.watch.down) return;
      for (const id of jobs.map((j) => j.opts.jobId))
        this.waiting.get(id)?.reject(e instanceof Error ? e.message : String(e));
    });
    try {
      return await Promise.all(answers);
    } catch (e) {
      // Nothing more of this batch is worth simulating: take what is still waiting off the
      // queue (unless Redis is gone: there is nothing to take off, and no one to ask).
      if (!(e instanceof QueueLostError))
        await bounded(Promise.allSettled(points.map((_, i) => this.queue.remove(`${batch}:${i}`))), CLOSE_WAIT_MS);
      throw e;
    }
  }

  async close(): Promise<void> {
    this.watch.stop();
    // A batch still waiting (it failed, or was stopped) ends now, its timers with it.
    for (const w of [...this.waiting.values()]) w.reject('the coordinator stopped');
    await closeBounded(this.queue, this.events);
  }
}

/** What the watch calls, filled in once the runner exists. */
interface WatchRelay {
  back(): void;
  lost(e: QueueLostError): void;
}

/**
 * Closes the queue's clients. With Redis gone a close would wait for it (and a disconnect may
 * never settle, with nothing left to keep the process up): each step is bounded.
 */
async function closeBounded(queue: Queue, events: QueueEvents): Promise<void> {
  const closed = await bounded(Promise.allSettled([events.close(), queue.close()]), CLOSE_WAIT_MS);
  if (!closed) await bounded(Promise.allSettled([events.disconnect(), queue.disconnect()]), CLOSE_WAIT_MS);
}

/** How long closing (or cleaning up after a failed batch) may wait for Redis. */
const CLOSE_WAIT_MS = 2000;

/** A job as `addBulk` takes it. */
interface BulkJob {
  name: string;
  data: QueuedPoint;
  opts: { jobId: string; removeOnComplete: true; removeOnFail: true; attempts: 1 };
}

/** What a coordinator does while its queue's Redis is away: how long it waits, where it says so. */
export interface QueueWaitOptions {
  /** @default QUEUE_WAIT_DEFAULT_MS */
  waitMs?: number;
  say(line: string): void;
}

/** Whether `p` settled within `ms`. */
async function bounded(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const done = await Promise.race([p.then(() => true), late]);
  clearTimeout(timer);
  return done;
}

function ignore(): void {}
