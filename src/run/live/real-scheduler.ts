import type { EventHandler, Scheduler } from '../../upstream/scheduler.js';
import { EventHeap } from '../sim/event-heap.js';

/**
 * A timer may fire up to this much before its event is due (Node counts timers in whole
 * milliseconds from the start of the loop turn); such events fire with it rather than a
 * millisecond later on a timer of their own.
 */
const EARLY_MS = 1;

const MAX_TIMER_MS = 0x7fffffff;

/** Reads a monotonic clock in ms (`performance.now()`). */
export type MonotonicNow = () => number;

/**
 * The `Scheduler` of a live run: the simulator's event queue (`EventHeap`: typed arrays,
 * fixed-delay lanes, no object per event) with one real timer armed for its earliest event.
 * `now()` is ms since the scheduler was made (or `restart`ed), from `performance.now()`.
 *
 * Due events fire in (time, sequence) order, each told `max(at, now)`, and `now()` never
 * reads below a time handed out, so handlers see one monotonic timeline
 * whether they run on a timer or on an HTTP answer. One timer rather than one per event: at
 * thousands of attempts per second it is re-armed only when an earlier event comes in, and
 * every event due in a loop turn fires in one pass. Events due at once go on `setImmediate`.
 *
 * `afterFire` runs after each pass (the live run checks there whether it is over). What a
 * handler throws goes to `onError`; the pass goes on with the next event.
 */
export class RealScheduler implements Scheduler {
  private readonly heap = new EventHeap();
  private origin: number;
  /** The latest time handed out; `now()` never goes below it. */
  private last = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private immediate: ReturnType<typeof setImmediate> | undefined;
  private timerAt = Infinity;
  private stopped = false;
  afterFire: (() => void) | undefined = undefined;

  constructor(
    private readonly onError: (err: unknown) => void = (err) => {
      throw err;
    },
    private readonly clock: MonotonicNow = () => performance.now(),
  ) {
    this.origin = clock();
  }

  /** Makes time 0 now (a run starts when it is started, not when it is built); call before scheduling anything. */
  restart(): void {
    this.origin = this.clock();
    this.last = 0;
  }

  now(): number {
    const t = this.clock() - this.origin;
    if (t > this.last) this.last = t;
    return this.last;
  }

  register(handler: EventHandler): number {
    // Each handler is told the time it runs at (or its due time, if that is a little later):
    // never an earlier one, and time moves on within a pass, so a pass of events that each
    // schedule another for "now" (closed-loop users shed at once) ends when real time has
    // moved past it instead of running at one instant forever.
    return this.heap.register({
      handle: (kind, id, at) => {
        if (at > this.last) this.last = at;
        try {
          handler.handle(kind, id, this.now());
        } catch (err) {
          this.onError(err);
        }
      },
    });
  }

  schedule(at: number, handler: number, kind: number, id: number): void {
    if (this.stopped) return;
    this.heap.schedule(at, handler, kind, id);
    if (at < this.timerAt) this.arm(at);
  }

  /** Events waiting to fire. */
  get pending(): number {
    return this.heap.pending;
  }

  /** Drops the timer; events not yet fired never fire, later `schedule` calls are ignored. */
  stop(): void {
    this.stopped = true;
    this.disarm();
    this.timerAt = Infinity;
  }

  private arm(at: number): void {
    this.disarm();
    this.timerAt = at;
    const delay = at - this.now();
    // An event due now (a retry without backoff, a closed-loop user without think time) fires
    // right after this turn's I/O rather than on a timer a millisecond or more away.
    if (delay <= 0) {
      this.immediate = setImmediate(this.fire);
      return;
    }
    // Node takes at most 2^31 − 1 ms (and fires at once past it); a later event waits for a second timer.
    this.timer = setTimeout(this.fire, Math.min(MAX_TIMER_MS, delay));
  }

  private disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.immediate = undefined;
    this.timerAt = Infinity;
    this.heap.runUntil(this.now() + EARLY_MS);
    if (this.stopped) return;
    this.afterFire?.();
    const next = this.heap.peekTime();
    if (next !== Infinity && !this.stopped && next < this.timerAt) this.arm(next);
  };
}
