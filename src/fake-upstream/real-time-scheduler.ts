import type { Clock } from '../engine/clock.js';
import type { EventHandler, Scheduler } from '../upstream/scheduler.js';

/**
 * A timer may fire up to this much before its event is due (Node counts timers in whole
 * milliseconds from the start of the loop turn). Such events are handed their own time and
 * `now()` never reads below a time handed out, so the model's timeline stays monotonic.
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

interface Event {
  at: number;
  seq: number;
  handler: number;
  kind: number;
  id: number;
}

/**
 * A `Scheduler` on the real clock, for the model behind the HTTP server: a binary heap of
 * events ordered by (time, sequence) and one timer armed for the earliest. Due events fire in
 * time order, ties in the order they were scheduled, each told `max(at, now)`. `now()` is ms
 * since the scheduler was made.
 *
 * One timer (the clock's) rather than one per event: at thousands of requests per second it
 * is re-armed only when an earlier event arrives, and the events due in a turn fire in one
 * pass of at most `PASS_BUDGET_MS` (the rest on a 0 ms timer: the next turn, after I/O).
 * `stop()` clears it; until then it keeps the process alive, like the server it serves.
 */
export class RealTimeScheduler implements Scheduler {
  private readonly origin: number;
  /** The latest time handed out; `now()` never goes below it. */
  private last = 0;
  private seq = 0;
  private readonly handlers: Array<EventHandler | null> = [];
  /** Events scheduled and not yet fired, per handler (a retired handler is dropped at 0). */
  private readonly pending: number[] = [];
  private readonly retired = new Set<number>();
  private readonly heap: Event[] = [];
  private cancelTimer: (() => void) | null = null;
  private timerAt = Infinity;
  private stopped = false;

  /** `onError` hears what a handler threw; the events behind it still fire. */
  constructor(
    private readonly clock: Clock,
    private readonly onError: (err: unknown) => void,
  ) {
    this.origin = clock.now();
  }

  now(): number {
    const t = this.clock.now() - this.origin;
    if (t > this.last) this.last = t;
    return this.last;
  }

  register(handler: EventHandler): number {
    this.handlers.push(handler);
    this.pending.push(0);
    return this.handlers.length - 1;
  }

  /** Handlers registered so far; the last one's index is this minus one. */
  get handlerCount(): number {
    return this.handlers.length;
  }

  /** Forgets `handler` once its pending events have fired (a model replaced by a reset). */
  retire(handler: number): void {
    if (this.pending[handler] === 0) this.handlers[handler] = null;
    else this.retired.add(handler);
  }

  schedule(at: number, handler: number, kind: number, id: number): void {
    if (this.stopped) return;
    this.pending[handler]++;
    this.push({ at, seq: this.seq++, handler, kind, id });
    if (at < this.timerAt) this.arm(at);
  }

  /** Events waiting to fire. */
  get size(): number {
    return this.heap.length;
  }

  /** Drops every pending event and the timer; later `schedule` calls are ignored. */
  stop(): void {
    this.stopped = true;
    this.cancelTimer?.();
    this.cancelTimer = null;
    this.timerAt = Infinity;
    this.heap.length = 0;
  }

  private arm(at: number): void {
    this.cancelTimer?.();
    this.timerAt = at;
    this.cancelTimer = this.clock.setTimer(Math.max(0, at - this.now()), this.fire);
  }

  private readonly fire = (): void => {
    this.cancelTimer = null;
    this.timerAt = Infinity;
    const started = this.clock.now();
    let fired = 0;
    while (this.heap.length > 0 && this.heap[0].at <= this.now() + EARLY_MS) {
      if (++fired % BUDGET_EVERY === 0 && this.clock.now() - started > PASS_BUDGET_MS) break;
      const e = this.pop();
      if (e.at > this.last) this.last = e.at;
      const target = this.handlers[e.handler];
      if (--this.pending[e.handler] === 0 && this.retired.delete(e.handler)) this.handlers[e.handler] = null;
      try {
        target?.handle(e.kind, e.id, this.last);
      } catch (err) {
        this.onError(err);
      }
    }
    if (this.heap.length > 0 && !this.stopped) this.arm(this.heap[0].at);
  };

  private push(e: Event): void {
    const h = this.heap;
    let i = h.push(e) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(e, h[parent])) break;
      h[i] = h[parent];
      i = parent;
    }
    h[i] = e;
  }

  private pop(): Event {
    const h = this.heap;
    const top = h[0];
    const e = h.pop()!;
    if (h.length === 0) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1,
        r = l + 1;
      let child = l;
      if (l >= h.length) break;
      if (r < h.length && before(h[r], h[l])) child = r;
      if (!before(h[child], e)) break;
      h[i] = h[child];
      i = child;
    }
    h[i] = e;
    return top;
  }
}

function before(a: Event, b: Event): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
