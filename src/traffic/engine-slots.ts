import type { ConcurrencyLimiter } from '../engine/concurrency-limiter.js';
import type { EventHandler, Scheduler } from '../upstream/scheduler.js';

/** Who hears how a call's wait for a slot ended. */
export interface SlotDriver {
  /** Call `id` was handed the slot it waited for: its attempt goes on. */
  granted(id: number, now: number): void;
  /** No slot for call `id`: the queue was full (`concurrency`) or its wait reached `maxWaitMs` (`queue_timeout`). */
  refused(id: number, reason: 'concurrency' | 'queue_timeout', now: number): void;
}

const K_GRANTED = 1;
const K_TIMED_OUT = 2;
const K_EXPIRE = 3;

/**
 * The engine's concurrency limit (`engine.concurrency`) for simulated and live runs, held per
 * attempt as `Guard` holds it: before each attempt asks its `GuardCall` for the next step, it
 * takes a slot of its guard's own `ConcurrencyLimiter` — `maxInFlight` at once, then a FIFO
 * queue of `maxQueue` callers, each waiting at most `maxWaitMs` — and gives it back when the
 * attempt ends (the hold time feeds the limiter's estimated wait). A call refused a slot is
 * shed (`concurrency` when the queue is full, `queue_timeout` after the wait), not retried,
 * as `guard.run` rejects with that `ShedError`. A layer's replicas each have their own
 * limiter: a concurrency limit is per process.
 *
 * Grants and timeouts happen inside the limiter (another attempt's release, an expiry); they
 * reach the driver as events at that instant, as `guard.run` resumes a waiter on a later
 * turn, so a call never restarts in the middle of another one's bookkeeping.
 */
export class EngineSlots implements EventHandler {
  private readonly limiters: ConcurrencyLimiter[] = [];
  private readonly indexOf = new Map<ConcurrencyLimiter, number>();
  private readonly expiryAt: number[] = [];
  private readonly handlerId: number;
  /** Per call: its limiter's index + 1 (0: its guard has no limit). */
  private of = new Int32Array(0);
  /** Per call: when it took the slot it holds (-1: none). */
  private grantedAt = new Float64Array(0);

  constructor(
    private readonly scheduler: Scheduler,
    private readonly driver: SlotDriver,
  ) {
    this.handlerId = scheduler.register(this);
  }

  /** Call `id`'s attempts take slots of `limiter` (its guard's), or none when undefined. */
  bind(id: number, limiter: ConcurrencyLimiter | undefined): void {
    this.ensure(id);
    this.grantedAt[id] = -1;
    if (limiter === undefined) {
      this.of[id] = 0;
      return;
    }
    let i = this.indexOf.get(limiter);
    if (i === undefined) {
      i = this.limiters.push(limiter) - 1;
      this.indexOf.set(limiter, i);
      this.expiryAt.push(Infinity);
    }
    this.of[id] = i + 1;
  }

  /**
   * Before an attempt of call `id`: true when it holds a slot (or has no limit) and goes on;
   * false when it waits for one (the driver hears `granted` or `refused` later) or the queue
   * is full (the driver has heard `refused`).
   */
  take(id: number, now: number): boolean {
    const i = this.of[id] - 1;
    if (i < 0 || this.grantedAt[id] >= 0) return true;
    const limiter = this.limiters[i];
    if (limiter.tryAcquire(now)) {
      this.grantedAt[id] = now;
      return true;
    }
    const w = limiter.enqueue(
      now,
      (t) => {
        this.grantedAt[id] = t;
        this.scheduler.schedule(t, this.handlerId, K_GRANTED, id);
      },
      (t) => this.scheduler.schedule(t, this.handlerId, K_TIMED_OUT, id),
    );
    if (w === -1) {
      this.driver.refused(id, 'concurrency', now);
      return false;
    }
    this.arm(i, now);
    return false;
  }

  /** The attempt of call `id` ended (or the call did): the slot it holds goes back. */
  release(id: number, now: number): void {
    if (id >= this.grantedAt.length || this.grantedAt[id] < 0) return;
    const i = this.of[id] - 1;
    const held = now - this.grantedAt[id];
    this.grantedAt[id] = -1;
    this.limiters[i].release(now, held);
    this.arm(i, now);
  }

  handle(kind: number, id: number, now: number): void {
    if (kind === K_GRANTED) return this.driver.granted(id, now);
    if (kind === K_TIMED_OUT) return this.driver.refused(id, 'queue_timeout', now);
    this.expiryAt[id] = Infinity;
    this.limiters[id].expire(now);
    this.arm(id, now);
  }

  /** A timer for limiter `i`'s oldest waiter's max wait, unless one is set for then or earlier. */
  private arm(i: number, now: number): void {
    const at = this.limiters[i].nextExpiryAt();
    if (at === Infinity || at >= this.expiryAt[i]) return;
    this.expiryAt[i] = at;
    this.scheduler.schedule(Math.max(now, at), this.handlerId, K_EXPIRE, i);
  }

  private ensure(id: number): void {
    if (id < this.of.length) return;
    const n = Math.max(1024, id + 1, this.of.length * 2);
    const of = new Int32Array(n);
    of.set(this.of);
    const g = new Float64Array(n).fill(-1);
    g.set(this.grantedAt);
    this.of = of;
    this.grantedAt = g;
  }
}
