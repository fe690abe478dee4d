import type { Clock } from '../engine/clock.js';
import type { StreamError } from '../engine/errors.js';
import { StreamDecision, type StreamGuard } from '../engine/stream-guard.js';
import { HeadersTimeoutError } from '../engine/stream-watch.js';
import { WatchTimer } from './watch-timer.js';

/**
 * The waits of one HTTP attempt through `guardedFetch`, on the guard's clock: the attempt's
 * `StreamGuard` (header wait, first token, idle gap) on one timer. `signal` aborts when the
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

  constructor(clock: Clock, outer: AbortSignal | undefined, guard: StreamGuard) {
    this.timer = new WatchTimer(clock, guard, (decision) => this.limit(decision));
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

  /** The guard was told what came (bytes, events): its limits may have moved. */
  sync(): void {
    this.timer.sync();
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

  private limit(decision: number): void {
    if (decision === StreamDecision.Complete) return this.finishSink?.();
    const e = this.timer.guard.error!;
    if (this.stallSink && !(e instanceof HeadersTimeoutError)) this.stallSink(e as StreamError);
    else this.cut(e);
  }

  private cut(e: Error): void {
    if (this.ac.signal.aborted) return;
    this.ours = e;
    this.ac.abort(e);
  }
}
