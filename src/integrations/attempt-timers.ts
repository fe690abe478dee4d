import type { Clock } from '../engine/clock.js';
import { StreamError } from '../engine/errors.js';
import { HeadersTimeoutError } from './stream-errors.js';

/**
 * The integration's own timers for one HTTP attempt, on the guard's clock: the header wait and
 * the first content token. `signal` aborts when the attempt's own signal does (deadline,
 * caller) or a timer fires before the headers are in; after them a first-token stall goes to
 * `onStall` (the stream reader), since aborting a fetch after its headers breaks its body
 * with an error that no longer says why.
 */
export class AttemptTimers {
  private readonly ac = new AbortController();
  private ours: Error | undefined = undefined;
  private cancelHeaders: (() => void) | undefined = undefined;
  private cancelFirst: (() => void) | undefined = undefined;
  private stallSink: ((e: StreamError) => void) | undefined = undefined;
  private readonly unlink: (() => void) | undefined;

  constructor(
    private readonly clock: Clock,
    outer: AbortSignal | undefined,
  ) {
    if (outer === undefined) return;
    if (outer.aborted) {
      this.ac.abort(outer.reason);
      return;
    }
    const onAbort = (): void => this.ac.abort(outer.reason);
    outer.addEventListener('abort', onAbort, { once: true });
    this.unlink = () => outer.removeEventListener('abort', onAbort);
  }

  get signal(): AbortSignal {
    return this.ac.signal;
  }

  /** Why a timer of ours cut the attempt, if one did. */
  reason(): Error | undefined {
    return this.ours;
  }

  headers(ms: number): void {
    if (ms !== Infinity) this.cancelHeaders = this.clock.setTimer(ms, () => this.cut(new HeadersTimeoutError(ms)));
  }

  headersIn(): void {
    this.cancelHeaders?.();
    this.cancelHeaders = undefined;
  }

  firstToken(ms: number): void {
    if (ms === Infinity) return;
    this.cancelFirst = this.clock.setTimer(ms, () => {
      const e = new StreamError('stream_stall', `no content token within ${Math.round(ms)} ms`);
      if (this.stallSink) this.stallSink(e);
      else this.cut(e);
    });
  }

  contentIn(): void {
    this.cancelFirst?.();
    this.cancelFirst = undefined;
  }

  onStall(fn: (e: StreamError) => void): void {
    this.stallSink = fn;
  }

  /** The attempt is over: no timer may fire any more. */
  end(): void {
    this.headersIn();
    this.contentIn();
    this.stallSink = undefined;
    this.unlink?.();
  }

  private cut(e: Error): void {
    if (this.ac.signal.aborted) return;
    this.ours = e;
    this.ac.abort(e);
  }
}
