import { QueueError } from '../../explore/queue-target.js';
import type { QueueLostError } from '../../explore/queue-watch.js';
import { EXIT, UsageError, type Io } from '../io.js';
import { positiveInt } from './explore-args.js';
import { checkQueueReachable, queueTarget, queueText, queueWaitMs } from './queue-args.js';

export interface WorkerFlags {
  queue?: string;
  concurrency?: string;
  queueWait?: string;
}

/**
 * `stormlab worker --queue redis://host`: takes the points of any `sweep|tune --queue` on that
 * queue and simulates them, `--concurrency` at once (one thread each), until Ctrl-C or SIGTERM;
 * then finishes the points in hand and exits 0 — at once, giving up the point in hand, when
 * Redis is away (it could not be reported). Redis away mid-run is one line, and one more when
 * it is back; away longer than `--queue-wait` the worker gives up: one line, exit 3.
 * Run it on as many machines as you like.
 */
export async function workerCommand(io: Io, flags: WorkerFlags): Promise<number> {
  if (flags.queue === undefined)
    throw new UsageError('--queue: give the Redis of the queue, e.g. --queue redis://127.0.0.1:6379');
  const target = queueTarget({ queue: flags.queue })!;
  const concurrency = positiveInt('--concurrency', flags.concurrency, 1);
  const waitMs = queueWaitMs(flags);
  await checkQueueReachable(target);
  const { startQueueWorkers } = await import('../../explore/queue-worker.js');
  const { watchQueue } = await import('../../explore/queue-watch.js');
  let lost: ((e: QueueLostError) => void) | undefined;
  const stopped = new Promise<string | QueueLostError>((resolve) => {
    lost = resolve;
    if (io.onStop === undefined) return;
    io.onStop(resolve);
  });
  // Watched from the start: Redis may go while BullMQ is still connecting, which then waits for it.
  const watch = watchQueue(target, { waitMs, say: (line) => io.stderr(`worker: ${line}`), onLost: (e) => lost?.(e) });
  const starting = startQueueWorkers(target, concurrency);
  let worker: Awaited<ReturnType<typeof startQueueWorkers>>;
  try {
    const first = await Promise.race([starting, stopped]);
    if (typeof first === 'string' || !('processed' in first)) {
      // Stopped, or Redis lost, before the workers were ready: they are closed as they come.
      watch.stop();
      void starting.then(
        (w) => w.close({ force: true }),
        () => {},
      );
      if (typeof first !== 'string') throw first;
      io.stderr(`worker: stopped (${first}) before it took a point\n`);
      return EXIT.ok;
    }
    worker = first;
  } catch (e) {
    watch.stop();
    if (e instanceof QueueError) throw new UsageError(e.message);
    throw e;
  }
  io.stderr(`worker: taking points from ${queueText(target)}, ${concurrency} at once; Ctrl-C to stop\n`);
  const why = await stopped;
  const away = watch.down || typeof why !== 'string';
  watch.stop();
  await worker.close({ force: away });
  const ran = `${worker.processed()} point${worker.processed() === 1 ? '' : 's'}`;
  if (typeof why !== 'string') throw Object.assign(why, { message: `${why.message}; the worker stops after ${ran}` });
  io.stderr(
    `worker: stopped (${why}) after ${ran}${away ? ' (Redis away: the point in hand, if any, is given up)' : ''}\n`,
  );
  return EXIT.ok;
}
