import type { Clock } from '../engine/clock.js';
import { StreamLimit, StreamWatch, type StreamWaits } from '../engine/stream-watch.js';

/**
 * A `StreamWatch` on a real (or manual) clock, with one timer for the whole attempt rather than
 * one per limit or per chunk: each input only moves the watch's due time, and the timer — armed
 * again only when the due time comes earlier than it — re-checks when it fires and re-arms for
 * what is left. `onLimit` is told once, with the `StreamLimit` that ran out.
 */
export class WatchTimer {
  private readonly watch: StreamWatch;
  private armedAt = Infinity;
  private cancel: (() => void) | undefined = undefined;
  private over = false;

  constructor(
    private readonly clock: Clock,
    waits: StreamWaits,
    private readonly onLimit: (limit: number) => void,
  ) {
    this.watch = new StreamWatch(waits, clock.now());
    this.sync();
  }

  headers(): void {
    this.watch.headers();
    this.sync();
  }

  /** Bytes came; `content`: the first delta the caller would receive is among them; `finished`: the answer's finish. */
  activity(content: boolean, finished: boolean): void {
    const now = this.clock.now();
    this.watch.activity(now);
    if (content) this.watch.content(now);
    if (finished) this.watch.finish();
    this.sync();
  }

  /** Whether the guard waits on the upstream now (a read is pending; the caller is not holding the stream back). */
  waiting(pending: boolean): void {
    this.watch.waiting(pending, this.clock.now());
    this.sync();
  }

  /** The attempt is over: nothing fires any more. */
  stop(): void {
    this.over = true;
    this.cancel?.();
    this.cancel = undefined;
  }

  private sync(): void {
    if (this.over) return;
    const due = this.watch.due();
    // A timer that fires no later than the due time re-checks then.
    if (this.armedAt <= due) return;
    this.arm(due);
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
    if (this.over) return;
    const limit = this.watch.check(this.clock.now());
    if (limit === StreamLimit.None) return this.arm(this.watch.due());
    this.stop();
    this.onLimit(limit);
  }
}
