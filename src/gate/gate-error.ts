import { StormlabError } from '../engine/errors.js';

/**
 * A problem with an expectation or a metric name as the user wrote it: `unknown metric
 * "amplificaton" (did you mean amplification?)`. The CLI prints it on one line, naming where
 * the text came from (`--expect`, `retry-storm.yaml: expect[2]`), and exits 2.
 */
export class GateError extends StormlabError {
  constructor(message: string) {
    super('ERR_STORMLAB_GATE', message);
  }
}
