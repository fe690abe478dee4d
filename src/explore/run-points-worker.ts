/**
 * A worker thread of `runPoints`: told the job once (workerData), it simulates each point it is
 * sent and posts back its outcome (a run, or why its values are refused), or the error with the
 * point's index. It loads the scenario itself; nothing but plain data crosses threads.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { StormlabError } from '../engine/errors.js';
import type { PointRequest, PointReply } from './run-points.js';
import { pointOutcome, type PointJob } from './simulate-point.js';

const port = parentPort;
if (port === null) throw new Error('run-points-worker.js runs only as a worker thread (runPoints starts it)');
const { job } = workerData as { job: PointJob };

port.on('message', (m: PointRequest) => {
  port.postMessage(answer(m));
});

function answer(m: PointRequest): PointReply {
  try {
    return { index: m.index, result: pointOutcome(job, m.sets) };
  } catch (e) {
    const message = e instanceof Error ? (e.stack ?? e.message) : String(e);
    return { index: m.index, error: { message, code: e instanceof StormlabError ? e.code : undefined } };
  }
}
