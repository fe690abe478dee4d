/**
 * One BullMQ worker in a worker thread of `stormlab worker --concurrency N`: simulations are
 * CPU-bound, so N at once need N threads. Told its queue (workerData), it says `ready`, takes
 * points until the main thread posts `close`, then says `closed` with how many it ran.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { QueueTarget } from './queue-target.js';
import { startQueueWorker } from './queue-worker.js';

const port = parentPort;
if (port === null) throw new Error('queue-worker-thread.js runs only as a worker thread (stormlab worker starts it)');
const worker = await startQueueWorker((workerData as { target: QueueTarget }).target);
port.postMessage({ ready: true });
port.on('message', (m: { close?: boolean; force?: boolean }) => {
  if (m.close)
    void worker.close({ force: m.force === true }).then(() => {
      port.postMessage({ closed: true, processed: worker.processed() });
      port.close();
    });
});
