import { StormlabError } from '../engine/errors.js';

/**
 * Nothing left to compare: every point of a sweep, or of a tuner's search, is refused (see
 * `RefusedPoint`), or the tuner's baseline is. The user's to fix, so the CLI prints the
 * message on one line after the flag that made the points and exits 2.
 */
export class RefusedError extends StormlabError {
  constructor(message: string) {
    super('ERR_STORMLAB_REFUSED', message);
  }
}
