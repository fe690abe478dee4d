import { StormlabError } from '../engine/errors.js';

/**
 * A problem with what `stormlab tune` was asked (a parameter without a range, a bad range):
 * the CLI prints it on one line after the flag it came from and exits 2.
 */
export class TuneError extends StormlabError {
  constructor(message: string) {
    super('ERR_STORMLAB_TUNE', message);
  }
}
