import type { Clock } from '../engine/clock.js';

/**
 * The idle gap of a stream, on one timer for the whole stream rather than one per chunk: each
 * chunk only moves a due time (a clock read), and the timer, when it fires early, re-arms for
 * what is left. Quiet counts only while the watch is `pending` (a read from the upstream is
 * outstanding, or the caller is not holding the stream back), so a slow reader is never taken
 * for a stalled upstream.
 */
export class IdleWatch {
  private due = Infinity;
  /** When the armed timer fires (Infinity: none armed). */
  private armedAt = Infinity;
  private cancel: (() => void) | undefined = undefined;
  private pending = false;

  constructor(
    private readonly clock: Clock,
    /** Called once `ms` (of the last `watch`) have passed with the watch pending and no new `watch`. */
    private readonly onQuiet: (ms: number) => void,
  ) {}

  private ms = Infinity;

  /** From now, `ms` of quiet while pending calls `onQuiet` (Infinity: never). */
  watch(ms: number): void {
    if (ms === Infinity) {
      this.pending = false;
      return;
    }
    const now = this.clock.now();
    this.pending = true;
    this.ms = ms;
    this.due = now + ms;
    // A timer that fires no later than the due time re-checks then; one that fires later must come sooner.
    if (this.armedAt <= this.due) return;
    this.arm(now);
  }

  /** Not waiting on the upstream now (the caller holds the stream back): quiet does not count. */
  rest(): void {
    this.pending = false;
  }

  /** The stream is over: no timer may fire any more. */
  stop(): void {
    this.pending = false;
    this.cancel?.();
    this.cancel = undefined;
    this.armedAt = Infinity;
  }

  private arm(now: number): void {
    this.cancel?.();
    this.armedAt = this.due;
    this.cancel = this.clock.setTimer(this.due - now, () => this.fire());
  }

  private fire(): void {
    this.cancel = undefined;
    this.armedAt = Infinity;
    if (!this.pending) return;
    const now = this.clock.now();
    if (now < this.due) return this.arm(now);
    this.pending = false;
    this.onQuiet(this.ms);
  }
}
