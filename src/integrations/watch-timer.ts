import type { Clock } from '../engine/clock.js';
import { StreamDecision, type StreamGuard } from '../engine/stream-guard.js';

/**
 * The timer of a `StreamGuard` on a real (or manual) clock, one for the whole attempt rather
 * than one per limit or per chunk: each input only moves the guard's due time, and the timer —
 * armed again only when the due time comes earlier than it — asks the guard when it fires and
 * re-arms for what is left. `onDecision` is told once, with the guard's final decision on a
 * limit (`FailOver`, `EndWithError`, `Resume`; `Complete` for quiet after a finish).
 */
export class WatchTimer {
  private armedAt = Infinity;
  private cancel: (() => void) | undefined = undefined;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    readonly guard: StreamGuard,
    private readonly onDecision: (decision: number) => void,
  ) {
    this.sync();
  }

  headers(): void {
    this.guard.headers();
    this.sync();
  }

  /** Whether the guard waits on the upstream now (a read is pending; the caller is not holding the stream back). */
  waiting(pending: boolean): void {
    this.guard.waiting(pending, this.clock.now());
    this.sync();
  }

  /** The guard was told something (bytes, events): its due time may have moved. */
  sync(): void {
    if (this.stopped) return;
    if (this.guard.over) return this.stop();
    const due = this.guard.due();
    // A timer that fires no later than the due time re-checks then.
    if (this.armedAt <= due) return;
    this.arm(due);
  }

  /** The attempt is over: nothing fires any more. */
  stop(): void {
    this.stopped = true;
    this.cancel?.();
    this.cancel = undefined;
  }

  private arm(due: number): void {
    this.cancel?.();
    this.cancel = undefined;
    this.armedAt = due;
    if (due === Infinity) return;
    this.cancel = this.clock.setTimer(Math.max(0, due - this.clock.now()), () => this.fire());
  }

  private fire(): void {
    this.cancel = undefined;
    this.armedAt = Infinity;
    if (this.stopped) return;
    const d = this.guard.timer(this.clock.now());
    if (d === StreamDecision.Hold) return this.arm(this.guard.due());
    this.stop();
    this.onDecision(d);
  }
}
