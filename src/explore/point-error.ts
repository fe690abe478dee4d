import { StormlabError } from '../engine/errors.js';

/**
 * A point of a sweep or a tune whose simulation failed (a bug, or its worker thread stopped),
 * named by its place and its `--set`s: `point 3 of 12 (engine.throttle.k=1.5 …): ...`. A point
 * whose values are refused is no failure: `runPoints` gives it back as a `RefusedPoint`.
 * `causeCode` is the code of the error behind it, when it had one.
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
