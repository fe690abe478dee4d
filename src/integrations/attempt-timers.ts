import type { Clock } from '../engine/clock.js';
import type { StreamError } from '../engine/errors.js';
import { StreamLimit, streamLimitError, type StreamWaits } from '../engine/stream-watch.js';
import { WatchTimer } from './watch-timer.js';

/**
 * The waits of one HTTP attempt through `guardedFetch`, on the guard's clock: the engine's
 * `StreamWatch` (header wait, first token, idle gap) on one timer. `signal` aborts when the
 * attempt's own signal does (deadline, caller) or a limit runs out before the headers are in;
 * after them a stall goes to `onStall` (the stream reader), since aborting a fetch after its
 * headers breaks its body with an error that no longer says why, and quiet after the answer's
 * finish to `onFinishQuiet`.
 */
export class AttemptTimers {
  private readonly ac = new AbortController();
  private ours: Error | undefined = undefined;
  private stallSink: ((e: StreamError) => void) | undefined = undefined;
  private finishSink: (() => void) | undefined = undefined;
  private readonly unlink: (() => void) | undefined;
  private readonly timer: WatchTimer;

  constructor(
    clock: Clock,
    outer: AbortSignal | undefined,
    private readonly waits: StreamWaits,
  ) {
    this.timer = new WatchTimer(clock, waits, (limit) => this.limit(limit));
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

  /** Why a limit of ours cut the attempt, if one did. */
  reason(): Error | undefined {
    return this.ours;
  }

  headersIn(): void {
    this.timer.headers();
  }

  /** Bytes of the stream came (with its first content delta, with its finish). */
  activity(content: boolean, finished: boolean): void {
    this.timer.activity(content, finished);
  }

  /** Whether a read from the upstream is pending (quiet counts only then). */
  waiting(pending: boolean): void {
    this.timer.waiting(pending);
  }

  onStall(fn: (e: StreamError) => void): void {
    this.stallSink = fn;
  }

  onFinishQuiet(fn: () => void): void {
    this.finishSink = fn;
  }

  /** The attempt is over: no limit may fire any more. */
  end(): void {
    this.timer.stop();
    this.stallSink = undefined;
    this.finishSink = undefined;
    this.unlink?.();
  }

  private limit(limit: number): void {
    if (limit === StreamLimit.FinishQuiet) return this.finishSink?.();
    const e = streamLimitError(limit, this.waits);
    if (this.stallSink && limit !== StreamLimit.Headers) this.stallSink(e as StreamError);
    else this.cut(e);
  }

  private cut(e: Error): void {
    if (this.ac.signal.aborted) return;
    this.ours = e;
    this.ac.abort(e);
  }
}
