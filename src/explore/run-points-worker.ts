/**
 * A worker thread of `runPoints`: told the job once (workerData), it simulates each point it is
 * sent and posts back its result, or the error with the point's index. It loads the scenario
 * itself; nothing but plain data crosses threads.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { StormlabError } from '../engine/errors.js';
import { initHistograms } from '../run/metrics/histogram.js';
import { ScenarioError } from '../scenario/scenario-error.js';
import type { PointRequest, PointReply } from './run-points.js';
import { simulatePoint, type PointJob } from './simulate-point.js';

const port = parentPort;
if (port === null) throw new Error('run-points-worker.js runs only as a worker thread (runPoints starts it)');
const { job } = workerData as { job: PointJob };
const ready = initHistograms();

port.on('message', (m: PointRequest) => {
  void ready.then(() => port.postMessage(answer(m)));
});

function answer(m: PointRequest): PointReply {
  try {
    return { index: m.index, result: simulatePoint(job, m.sets) };
  } catch (e) {
    // A scenario's problems read best on one line: the point is named before them.
    const message = e instanceof ScenarioError ? e.problems.join('; ') : e instanceof Error ? (e.stack ?? e.message) : String(e);
    return { index: m.index, error: { message, code: e instanceof StormlabError ? e.code : undefined } };
  }
}
