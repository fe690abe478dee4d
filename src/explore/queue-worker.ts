import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { threadId, Worker as Thread } from 'node:worker_threads';
import type { Worker } from 'bullmq';
import type { QueuedAnswer, QueuedPoint } from './queue-points.js';
import { loadBullmq, type QueueTarget } from './queue-target.js';
import { pointOutcome } from './simulate-point.js';

/** A running `stormlab worker`: how many points it ran, and how to stop it (after the point in hand). */
export interface QueueWorker {
  readonly processed: () => number;
  /**
   * Stops taking points. It waits for the point in hand (and for Redis to hear of it) at most
   * `CLOSE_WAIT_MS`; with `force` (Redis is away: the answer could not be sent) not at all.
   * Then the connections are dropped, whatever Redis does.
   */
  close(options?: { force?: boolean }): Promise<void>;
}

/** How long closing a worker waits for the point in hand to be answered, with Redis there. */
const CLOSE_WAIT_MS = 30_000;
/** How long a forced close waits for BullMQ before dropping its connections. */
const FORCE_WAIT_MS = 1000;

/**
 * Takes points off the queue and simulates them, one at a time per BullMQ worker: each
 * simulation is CPU-bound and synchronous, so `concurrency` workers are `concurrency` BullMQ
 * workers in this process only when they are also given threads — see `startQueueWorkers`.
 * Scenario texts are written once each to a private temp folder, under their file's name.
 */
export async function startQueueWorker(target: QueueTarget, name = workerName()): Promise<QueueWorker> {
  const { Worker } = await loadBullmq();
  const dir = mkdtempSync(join(tmpdir(), 'stormlab-worker-'));
  const written = new Set<string>();
  let processed = 0;
  const worker: Worker = new Worker(
    target.name,
    async (job): Promise<QueuedAnswer> => {
      const p = job.data as QueuedPoint;
      const sub = createHash('sha256').update(p.scenario.text).digest('hex').slice(0, 16);
      if (!written.has(sub)) {
        mkdirSync(join(dir, sub), { recursive: true });
        writeFileSync(join(dir, sub, p.scenario.file), p.scenario.text);
        written.add(sub);
      }
      const outcome = pointOutcome(
        { scenario: p.scenario.file, cwd: join(dir, sub), set: p.set, variant: p.variant },
        p.sets,
      );
      processed++;
      return { outcome, worker: name };
    },
    { connection: target.connection, concurrency: 1 },
  );
  // Its clients reconnect by themselves; each failed attempt is an 'error' event, which BullMQ
  // prints with its stack when no one listens. `stormlab worker` watches Redis and says it once.
  worker.on('error', () => {});
  await worker.waitUntilReady();
  return {
    processed: () => processed,
    async close(options = {}) {
      const closed = await settlesWithin(
        worker.close(options.force === true),
        options.force === true ? FORCE_WAIT_MS : CLOSE_WAIT_MS,
      );
      if (!closed) await settlesWithin(worker.disconnect(), FORCE_WAIT_MS);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Whether `p` settled (either way) within `ms`. */
async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const done = await Promise.race([
    p.then(
      () => true,
      () => true,
    ),
    late,
  ]);
  clearTimeout(timer);
  return done;
}

/** `host:pid:thread`: how the coordinator tells workers apart. */
export function workerName(): string {
  return `${hostname()}:${process.pid}:${threadId}`;
}

/**
 * `stormlab worker --concurrency N`: one BullMQ worker here for N = 1 (no thread start-up),
 * else N of them, each in its own worker thread, so N simulations run at once.
 */
export async function startQueueWorkers(target: QueueTarget, concurrency: number): Promise<QueueWorker> {
  if (concurrency <= 1) return startQueueWorker(target);
  const threads = Array.from({ length: concurrency }, () => new Thread(threadScript(), { workerData: { target } }));
  const counts = threads.map(() => 0);
  await Promise.all(
    threads.map(
      (t) =>
        new Promise<void>((resolve, reject) => {
          t.once('error', reject);
          t.once('message', () => resolve());
        }),
    ),
  );
  return {
    processed: () => counts.reduce((a, b) => a + b, 0),
    async close(options = {}) {
      const force = options.force === true;
      await Promise.all(
        threads.map(
          (t, i) =>
            new Promise<void>((resolve) => {
              t.on('message', (m: { closed?: boolean; processed?: number }) => {
                if (m.closed) counts[i] = m.processed ?? 0;
              });
              t.once('exit', () => resolve());
              t.postMessage({ close: true, force });
              // A thread that cannot close (its BullMQ waits for Redis) is ended, past its own bound.
              setTimeout(() => void t.terminate(), (force ? FORCE_WAIT_MS : CLOSE_WAIT_MS) + 2 * FORCE_WAIT_MS).unref();
            }),
        ),
      );
    },
  };
}

/** The thread script beside this module once built; under vitest (TypeScript source) the built copy in dist/. */
function threadScript(here: string = import.meta.url): string {
  const url = here.endsWith('.js')
    ? new URL('./queue-worker-thread.js', here)
    : new URL('../../dist/explore/queue-worker-thread.js', here);
  const file = fileURLToPath(url);
  if (!existsSync(file)) throw new Error(`the worker script ${file} is missing: build it with npm run build`);
  return file;
}
