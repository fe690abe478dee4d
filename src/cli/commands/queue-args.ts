import type { RunPointsFn, WorkerChoice } from '../../explore/run-points.js';
import { QueueError, parseQueueUrl, type QueueTarget } from '../../explore/queue-target.js';
import type { QueueWaitOptions } from '../../explore/queue-points.js';
import { QUEUE_WAIT_DEFAULT_MS } from '../../explore/queue-watch.js';
import type { PointJob } from '../../explore/simulate-point.js';
import { parseDuration } from '../../upstream/duration.js';
import { type Io, UsageError } from '../io.js';

/** `--queue`, checked (a bad URL is a usage error); `--workers` beside it is one too (the workers are `stormlab worker`s). */
export function queueTarget(flags: { queue?: string; workers?: string }): QueueTarget | undefined {
  if (flags.queue === undefined) return undefined;
  if (flags.workers !== undefined)
    throw new UsageError('--workers: with --queue the points run on `stormlab worker` processes; leave --workers out');
  try {
    return parseQueueUrl(flags.queue);
  } catch (e) {
    if (e instanceof QueueError) throw new UsageError(e.message.replace(/^--queue: /, '--queue: '));
    throw e;
  }
}

/** `127.0.0.1:6379 queue stormlab-points`: where the points go, for the start line. */
export function queueText(t: QueueTarget): string {
  return `the queue ${t.name} at ${t.connection.host}:${t.connection.port}`;
}

/** A queue's runner as sweep and tune use one, and the count of workers that took its points. */
export interface OpenQueue {
  run: RunPointsFn;
  workers(): number;
  close(): Promise<void>;
}

/**
 * Checks that the queue's Redis answers (else one line, exit 2, rather than BullMQ retrying for
 * ever) — for the coordinator and for `stormlab worker` alike.
 */
export async function checkQueueReachable(target: QueueTarget): Promise<void> {
  const { reachRedis } = await import('../../explore/reach-redis.js');
  await reachRedis(target).catch((e: unknown) => {
    if (e instanceof QueueError) throw new UsageError(e.message);
    throw e;
  });
}

/**
 * What a sweep or tune says before it starts, held until its queue answers when `held`: an
 * unreachable Redis is then the only line, not one after "sweeping … on the queue".
 */
export function heldUntilQueue(io: Io, held: boolean): { io: Io; flush(): void } {
  if (!held) return { io, flush: () => {} };
  const lines: string[] = [];
  return {
    io: { ...io, stderr: (t) => void lines.push(t) },
    flush: () => {
      for (const t of lines.splice(0)) io.stderr(t);
    },
  };
}

/**
 * `--queue-wait <duration>`: how long the queue's Redis may be away mid-run before the command
 * fails (default 30s); a unit is required, as for --duration. Checked before anything runs.
 */
export function queueWaitMs(flags: { queue?: string; queueWait?: string }): number {
  if (flags.queueWait === undefined) return QUEUE_WAIT_DEFAULT_MS;
  if (flags.queue === undefined)
    throw new UsageError('--queue-wait: it is the wait for the Redis of --queue; give --queue too');
  const raw = flags.queueWait;
  const ms = parseDuration(raw);
  if (ms === undefined || !(ms > 0) || /^\s*[\d.]+\s*$/.test(raw))
    throw new UsageError(
      `--queue-wait: expected a duration above 0 with a unit, like 30s or 2m, got ${JSON.stringify(raw)}`,
    );
  return ms;
}

/** Opens the queue (bullmq loaded now; missing, it is one line) for the points of `job`. */
export async function openQueue(target: QueueTarget, job: PointJob, wait: QueueWaitOptions): Promise<OpenQueue> {
  await checkQueueReachable(target);
  const { QueueRunner } = await import('../../explore/queue-points.js');
  const runner = await QueueRunner.open(target, job, wait).catch((e: unknown) => {
    if (e instanceof QueueError) throw new UsageError(e.message);
    throw e;
  });
  return {
    run: (_job, points, o) => {
      const choice: WorkerChoice = { used: Math.max(1, runner.workers.size), auto: false };
      return runner.run(points, o.onDone).then((r) => {
        o.onWorkers?.({ ...choice, used: runner.workers.size });
        return r;
      });
    },
    workers: () => runner.workers.size,
    close: () => runner.close(),
  };
}
