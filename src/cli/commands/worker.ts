import { QueueError } from '../../explore/queue-target.js';
import { EXIT, UsageError, type Io } from '../io.js';
import { positiveInt } from './explore-args.js';
import { checkQueueReachable, queueTarget, queueText } from './queue-args.js';

export interface WorkerFlags {
  queue?: string;
  concurrency?: string;
}

/**
 * `stormlab worker --queue redis://host`: takes the points of any `sweep|tune --queue` on that
 * queue and simulates them, `--concurrency` at once (one thread each), until Ctrl-C or SIGTERM;
 * then finishes the points in hand and exits 0. Run it on as many machines as you like.
 */
export async function workerCommand(io: Io, flags: WorkerFlags): Promise<number> {
  if (flags.queue === undefined)
    throw new UsageError('--queue: give the Redis of the queue, e.g. --queue redis://127.0.0.1:6379');
  const target = queueTarget({ queue: flags.queue })!;
  const concurrency = positiveInt('--concurrency', flags.concurrency, 1);
  await checkQueueReachable(target);
  const { startQueueWorkers } = await import('../../explore/queue-worker.js');
  const stopped = new Promise<string>((resolve) => {
    if (io.onStop === undefined) return;
    io.onStop(resolve);
  });
  let worker: Awaited<ReturnType<typeof startQueueWorkers>>;
  try {
    worker = await startQueueWorkers(target, concurrency);
  } catch (e) {
    if (e instanceof QueueError) throw new UsageError(e.message);
    throw e;
  }
  io.stderr(`worker: taking points from ${queueText(target)}, ${concurrency} at once; Ctrl-C to stop\n`);
  const signal = await stopped;
  await worker.close();
  io.stderr(`worker: stopped (${signal}) after ${worker.processed()} point${worker.processed() === 1 ? '' : 's'}\n`);
  return EXIT.ok;
}
