import { StormlabError } from '../engine/errors.js';

/** Traces `calibrate` cannot read or make sense of: one line naming the file and where, exit 2. */
export class CalibrateError extends StormlabError {
  constructor(message: string) {
    super('ERR_STORMLAB_CALIBRATE', message);
  }
}
