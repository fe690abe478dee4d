import { StormlabError } from '../engine/errors.js';

/**
 * A point of a sweep or a tune that could not be simulated, named by its place and its
 * `--set`s: `point 3 of 12 (engine.throttle.k=1.5 engine.retryBudget.ratio=0.1): ...`.
 * `causeCode` is the code of the error behind it (`ERR_STORMLAB_SCENARIO` when the point's
 * values make a scenario that does not validate), so callers can tell bad input from a bug.
 */
export class PointError extends StormlabError {
  constructor(
    readonly index: number,
    readonly total: number,
    readonly sets: readonly string[],
    readonly detail: string,
    readonly causeCode?: string,
  ) {
    super('ERR_STORMLAB_POINT', `point ${index + 1} of ${total} (${sets.join(' ') || 'no --set'}): ${detail}`);
  }
}
