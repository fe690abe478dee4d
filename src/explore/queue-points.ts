import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import type { Queue, QueueEvents } from 'bullmq';
import { BUNDLED_DIR, resolveScenarioPath } from '../scenario/bundled.js';
import { PointError } from './point-error.js';
import type { PointOutcome } from './point-refusal.js';
import type { RunPointsOptions } from './run-points.js';
import { loadBullmq, type QueueTarget } from './queue-target.js';
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
  return { file: basename(path), text: readFileSync(path, 'utf8') };
}

/**
 * `runPoints` over a BullMQ queue: each batch's points become jobs any `stormlab worker` takes
 * (on this machine or others); the outcomes come back in point order. Every point carries its
 * seed in its `--set`s, so the outcomes are those of a local run, whoever ran them.
 */
export class QueueRunner {
  /** The workers (host, process, thread) that ran at least one point. */
  readonly workers = new Set<string>();
  private waiting = new Map<string, { resolve: (a: QueuedAnswer) => void; reject: (reason: string) => void }>();

  private constructor(
    private readonly queue: Queue,
    private readonly events: QueueEvents,
    private readonly job: PointJob,
    private readonly scenario: QueuedPoint['scenario'],
    private readonly batchId: string = randomUUID(),
  ) {
    events.on('completed', ({ jobId, returnvalue }) => {
      const answer = (typeof returnvalue === 'string' ? JSON.parse(returnvalue) : returnvalue) as QueuedAnswer;
      this.waiting.get(jobId)?.resolve(answer);
    });
    events.on('failed', ({ jobId, failedReason }) => this.waiting.get(jobId)?.reject(failedReason));
  }

  static async open(target: QueueTarget, job: PointJob): Promise<QueueRunner> {
    const scenario = queuedScenario(job);
    const { Queue, QueueEvents } = await loadBullmq();
    const queue = new Queue(target.name, { connection: target.connection });
    const events = new QueueEvents(target.name, { connection: target.connection });
    try {
      await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
    } catch (e) {
      await Promise.allSettled([queue.close(), events.close()]);
      throw e;
    }
    return new QueueRunner(queue, events, job, scenario);
  }

  /** Puts the points on the queue and waits for all of them; the first failure rejects (a bug, as with threads). */
  async run(points: string[][], onDone?: RunPointsOptions['onDone']): Promise<PointOutcome[]> {
    const batch = `${this.batchId}:${randomUUID().slice(0, 8)}`;
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
          reject: (reason) => finish(() => reject(new PointError(index, points.length, sets, reason))),
        });
      });
    });
    await this.queue.addBulk(
      points.map((sets, index) => ({
        name: 'point',
        data: { scenario: this.scenario, set: this.job.set, variant: this.job.variant, sets } satisfies QueuedPoint,
        opts: { jobId: `${batch}:${index}`, removeOnComplete: true, removeOnFail: true, attempts: 1 },
      })),
    );
    try {
      return await Promise.all(answers);
    } catch (e) {
      // Nothing more of this batch is worth simulating: take what is still waiting off the queue.
      await Promise.allSettled(points.map((_, i) => this.queue.remove(`${batch}:${i}`)));
      throw e;
    }
  }

  async close(): Promise<void> {
    // A batch still waiting (it failed, or was stopped) ends now, its timers with it.
    for (const w of [...this.waiting.values()]) w.reject('the coordinator stopped');
    await Promise.allSettled([this.events.close(), this.queue.close()]);
  }
}
