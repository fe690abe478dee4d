import type { Clock } from '../engine/clock.js';
import { preciseClock } from '../platform/system-clock.js';
import type { EventHandler, Scheduler } from '../upstream/scheduler.js';
import { EventHeap } from './sim/event-heap.js';

/**
 * A timer may fire up to this much before its event is due (Node counts timers in whole
 * milliseconds from the start of the loop turn); such events fire with it rather than a
 * millisecond later on a timer of their own.
 */
const EARLY_MS = 1;

/**
 * A pass of due events stops after about this much time and goes on in the next loop turn,
 * after the I/O that waited. Requests that arrive in one burst are due in one burst too — 5,000
 * streams accepted together answer within the same millisecond — and one pass over all of
 * them would hold the loop for hundreds of ms (timers late, first bytes late, reads waiting).
 */
const PASS_BUDGET_MS = 8;
/** The clock is read for the budget once per this many events (a read costs as much as a small event). */
const BUDGET_EVERY = 16;

const MAX_TIMER_MS = 0x7fffffff;

/** What the scheduler reads time from and arms its one timer on. */
export interface SchedulerClock extends Clock {
  /**
   * Runs `fn` right after this loop turn's I/O (Node's `setImmediate`) and returns a cancel;
   * events already due go there. Without it they go on a 0 ms timer (`setTimer(0, …)`).
   */
  setImmediate?(fn: () => void): () => void;
}

/** The real clock (`preciseClock`) with `setImmediate`: the default. */
const realClock: SchedulerClock = {
  now: preciseClock.now,
  setTimer: preciseClock.setTimer,
  setImmediate(fn) {
    const i = setImmediate(fn);
    return () => clearImmediate(i);
  },
};

/**
 * The `Scheduler` on the real clock, for both things that run the model's event handlers in
 * real time: a live run (`run/live/live-run.ts`) and the fake upstream's HTTP server. It is the
 * simulator's event queue (`EventHeap`: typed arrays, no object per event) with one timer
 * armed for its earliest event. `now()` is ms since the scheduler was made (or `restart`ed).
 *
 * Due events fire in (time, sequence) order, each told `max(at, now)`, and `now()` never
 * reads below a time handed out, so handlers see one monotonic timeline whether they run on
 * a timer or on an HTTP answer. One timer rather than one per event: at thousands of events
 * per second it is re-armed only when an earlier event comes in, and the events due in a loop
 * turn fire in one pass of at most `PASS_BUDGET_MS`; the rest, and events due at once, go on
 * `setImmediate` (the next turn, after I/O). A pass of events that each schedule another for
 * "now" (closed-loop users shed at once) therefore ends instead of running at one instant.
 *
 * `afterFire` runs after each pass (a live run checks there whether it is over). What a
 * handler throws goes to `onError` and the pass goes on with the next event. Until `stop()`
 * the timer keeps the process alive, like the server or run it serves.
 */
export class RealTimeScheduler implements Scheduler {
  private readonly heap = new EventHeap();
  private readonly clock: SchedulerClock;
  private readonly onError: (err: unknown) => void;
  private origin: number;
  /** The latest time handed out; `now()` never goes below it. */
  private last = 0;
  private readonly handlers: Array<EventHandler | null> = [];
  /** Events scheduled and not yet fired, per handler (a retired handler is dropped at 0). */
  private readonly waiting: number[] = [];
  private readonly retired = new Set<number>();
  private cancelTimer: (() => void) | undefined;
  private timerAt = Infinity;
  private firing = false;
  private stopped = false;
  afterFire: (() => void) | undefined = undefined;

  /** `onError` hears what a handler threw (by default it is thrown on); `clock` is the real one by default. */
  constructor(options: { onError?: (err: unknown) => void; clock?: SchedulerClock | undefined } = {}) {
    this.onError =
      options.onError ??
      ((err) => {
        throw err;
      });
    this.clock = options.clock ?? realClock;
    this.origin = this.clock.now();
  }

  /**
   * Makes time 0 now, or at `originMs` of the clock (a fleet's agreed start, perhaps just
   * past): a run starts when it is started, not when it is built. Call before scheduling anything.
   */
  restart(originMs?: number): void {
    this.origin = originMs ?? this.clock.now();
    this.last = 0;
  }

  now(): number {
    const t = this.clock.now() - this.origin;
    if (t > this.last) this.last = t;
    return this.last;
  }

  register(handler: EventHandler): number {
    const index = this.handlers.push(handler) - 1;
    this.waiting.push(0);
    return this.heap.register({
      handle: (kind, id, at) => {
        if (at > this.last) this.last = at;
        const target = this.handlers[index];
        if (--this.waiting[index] === 0 && this.retired.delete(index)) this.handlers[index] = null;
        try {
          target?.handle(kind, id, this.now());
        } catch (err) {
          this.onError(err);
        }
      },
    });
  }

  /** Handlers registered so far; the last one's index is this minus one. */
  get handlerCount(): number {
    return this.handlers.length;
  }

  /** Forgets `handler` once its pending events have fired (a model replaced by a reset). */
  retire(handler: number): void {
    if (this.waiting[handler] === 0) this.handlers[handler] = null;
    else this.retired.add(handler);
  }

  schedule(at: number, handler: number, kind: number, id: number): void {
    if (this.stopped) return;
    this.waiting[handler]++;
    this.heap.schedule(at, handler, kind, id);
    if (!this.firing && at < this.timerAt) this.arm(at);
  }

  /** Events waiting to fire. */
  get pending(): number {
    return this.stopped ? 0 : this.heap.pending;
  }

  /** Drops the timer; events not yet fired never fire, later `schedule` calls are ignored. */
  stop(): void {
    this.stopped = true;
    this.disarm();
  }

  private arm(at: number): void {
    this.disarm();
    this.timerAt = at;
    const delay = at - this.now();
    // An event due now (a retry without backoff, a closed-loop user without think time) fires
    // right after this turn's I/O rather than on a timer a millisecond or more away.
    if (delay <= 0 && this.clock.setImmediate !== undefined) this.cancelTimer = this.clock.setImmediate(this.fire);
    // Node takes at most 2^31 − 1 ms (and fires at once past it); a later event waits for a second timer.
    else this.cancelTimer = this.clock.setTimer(Math.min(MAX_TIMER_MS, Math.max(0, delay)), this.fire);
  }

  private disarm(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.timerAt = Infinity;
  }

  private readonly fire = (): void => {
    this.cancelTimer = undefined;
    this.timerAt = Infinity;
    this.firing = true;
    const started = this.clock.now();
    // Chunks of BUDGET_EVERY events, the budget checked between them; each chunk takes what
    // is due by then, so time moves on within a pass.
    // The heap's clock stays at the last event fired: were it moved on to the horizon, every
    // event scheduled for "now" after this pass would be stamped up to EARLY_MS later, and
    // time would gain that much per pass (a closed loop passing thousands of times a second
    // ran its clock at twice real time: runs ended early, latencies read long).
    while (!this.stopped && this.heap.runUntil(this.now() + EARLY_MS, BUDGET_EVERY, false) === BUDGET_EVERY) {
      if (this.clock.now() - started > PASS_BUDGET_MS) break;
    }
    this.firing = false;
    if (this.stopped) return;
    this.afterFire?.();
    const next = this.heap.peekTime();
    if (next !== Infinity && !this.stopped && next < this.timerAt) this.arm(next);
  };
}
