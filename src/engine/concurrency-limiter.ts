import type { Clock } from './clock.js';
import { ShedError, StormlabError } from './errors.js';
import { AT_LEAST_0, checkRange, INTEGER_AT_LEAST_1, type Range, withDefaults } from './options.js';

export interface ConcurrencyLimiterOptions {
  /** Calls allowed in flight at once. @default 64 */
  maxInFlight: number;
  /** Callers allowed to wait for a slot; 0 = no queue, refuse at once. @default 256 */
  maxQueue: number;
  /** Longest a caller waits in the queue before it is timed out. @default 10_000 */
  maxWaitMs: number;
}

export const CONCURRENCY_LIMITER_DEFAULTS: Readonly<ConcurrencyLimiterOptions> = Object.freeze({
  maxInFlight: 64,
  maxQueue: 256,
  maxWaitMs: 10_000,
});

/** Each option's range, checked by the constructor and by the scenario schema. */
export const CONCURRENCY_LIMITER_RANGES: Readonly<Record<keyof ConcurrencyLimiterOptions, Range>> = Object.freeze({
  maxInFlight: INTEGER_AT_LEAST_1,
  maxQueue: { min: 0, integer: true },
  maxWaitMs: AT_LEAST_0,
});

interface Waiter {
  id: number;
  /** When the waiter joined the queue. */
  at: number;
  /** False once granted, timed out or cancelled; dead waiters are skipped at the head. */
  live: boolean;
  onGrant: (now: number) => void;
  onTimeout: (now: number) => void;
}

/** Weight of the newest hold-time sample in the running mean. */
const EWMA_ALPHA = 0.2;
/** Compact the queue array once this many dead entries have piled up behind the head. */
const COMPACT_AT = 64;
/** Drop the consumed front of the queue array once the head is this far in (and past half). */
const TRIM_AT = 1024;

/**
 * Max in flight + bounded FIFO queue + max wait. The core is synchronous and takes `now`,
 * for the event-driven simulator: a driver calls `expire` on a timer set for `nextExpiryAt()`.
 * `acquire` wraps it in a promise for everyone else.
 *
 * Invariant: nobody waits while a slot is free. Every path that frees a slot or adds a
 * waiter hands free slots to the head of the queue before returning.
 */
export class ConcurrencyLimiter {
  private readonly max: number;
  private readonly maxQueue: number;
  private readonly maxWaitMs: number;
  /** Waiters in id order; `head` is the first entry not yet handed out. */
  private queue: Waiter[] = [];
  private head = 0;
  private live = 0;
  private dead = 0;
  private nextId = 1;
  private running = 0;
  private meanHoldMs = 0;
  private samples = 0;

  constructor(options?: Partial<ConcurrencyLimiterOptions>) {
    const o = withDefaults(CONCURRENCY_LIMITER_DEFAULTS, options);
    const r = CONCURRENCY_LIMITER_RANGES;
    this.max = checkRange('concurrencyLimiter.maxInFlight', o.maxInFlight, r.maxInFlight);
    this.maxQueue = checkRange('concurrencyLimiter.maxQueue', o.maxQueue, r.maxQueue);
    this.maxWaitMs = checkRange('concurrencyLimiter.maxWaitMs', o.maxWaitMs, r.maxWaitMs);
  }

  get inFlight(): number {
    return this.running;
  }

  get queued(): number {
    return this.live;
  }

  /** Takes a slot if one is free and nobody is queued ahead (FIFO fairness). */
  tryAcquire(_now: number): boolean {
    if (this.live > 0 || this.running >= this.max) return false;
    this.running++;
    return true;
  }

  /**
   * Joins the queue. `onGrant(now)` is called (synchronously, from `release`) when a slot is
   * handed over; `onTimeout(now)` from `expire` once the wait passes `maxWaitMs`.
   * Returns the waiter id, or -1 when the queue is full (nothing is called then). Normally
   * called after `tryAcquire` failed; if a slot is free anyway, `onGrant` runs before this returns.
   */
  enqueue(now: number, onGrant: (now: number) => void, onTimeout: (now: number) => void): number {
    this.expire(now);
    if (this.live >= this.maxQueue) return -1;
    const id = this.nextId++;
    this.queue.push({ id, at: now, live: true, onGrant, onTimeout });
    this.live++;
    this.grant(now);
    return id;
  }

  /** Removes a waiting caller (e.g. it aborted). False if it is no longer waiting. */
  cancel(waiterId: number): boolean {
    const w = this.find(waiterId);
    if (w === undefined || !w.live) return false;
    this.kill(w);
    if (this.dead >= COMPACT_AT && this.dead > this.live) this.compact();
    return true;
  }

  /**
   * Frees a slot and hands it to the oldest waiter still within its max wait. Waiters due at
   * `now` time out first, so a timeout and a release at the same instant always agree.
   * `heldMs` (how long the slot was held) feeds the wait estimate; it is ignored unless finite and >= 0.
   */
  release(now: number, heldMs?: number): void {
    if (this.running === 0)
      throw new StormlabError('ERR_STORMLAB_RELEASE', 'concurrencyLimiter.release called with nothing in flight');
    this.running--;
    if (heldMs !== undefined && heldMs >= 0 && heldMs < Infinity) this.sample(heldMs);
    this.expire(now);
    this.grant(now);
  }

  /** Times out (calls `onTimeout`) every waiter queued for `maxWaitMs` or more at `now`. */
  expire(now: number): void {
    for (;;) {
      const w = this.peek();
      if (w === undefined || now < w.at + this.maxWaitMs) return;
      this.kill(w);
      w.onTimeout(now);
    }
  }

  /** When the oldest waiter times out; Infinity with nobody waiting. */
  nextExpiryAt(): number {
    const w = this.peek();
    return w === undefined ? Infinity : w.at + this.maxWaitMs;
  }

  /**
   * Expected wait for a caller arriving now: it is served after everyone queued, `maxInFlight`
   * at a time, each round taking about one mean hold time:
   *   wait ≈ ceil((queued + 1) / maxInFlight) × meanHold   (0 if a slot is free now)
   * meanHold is an EWMA of `heldMs` (alpha 0.2), 0 before the first sample.
   */
  estimatedWaitMs(_now: number): number {
    if (this.live === 0 && this.running < this.max) return 0;
    return Math.ceil((this.live + 1) / this.max) * this.meanHoldMs;
  }

  /**
   * Waits for a slot on `clock`. Resolves with a release function (call it once; it records
   * the hold time). Rejects with `ShedError('concurrency')` when the queue is full,
   * `ShedError('queue_timeout')` after `maxWaitMs`, or the signal's reason on abort.
   */
  acquire(clock: Clock, signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const now = clock.now();
    if (this.tryAcquire(now)) return Promise.resolve(this.releaser(clock, now));
    return new Promise((resolve, reject) => this.wait(clock, now, signal, resolve, reject));
  }

  private wait(
    clock: Clock,
    start: number,
    signal: AbortSignal | undefined,
    resolve: (release: () => void) => void,
    reject: (e: unknown) => void,
  ): void {
    let settled = false;
    let cancelTimer = (): void => {};
    const settle = (): void => {
      settled = true;
      cancelTimer();
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = (): void => {
      if (this.cancel(id)) {
        settle();
        reject(signal!.reason);
      }
    };
    const onGrant = (now: number): void => {
      settle();
      resolve(this.releaser(clock, now));
    };
    const onTimeout = (): void => {
      settle();
      reject(new ShedError('queue_timeout', { detail: `waited ${this.maxWaitMs} ms for a concurrency slot` }));
    };
    const id = this.enqueue(start, onGrant, onTimeout);
    if (id === -1) return reject(new ShedError('concurrency', { retryAfterMs: this.estimatedWaitMs(start) }));
    if (settled) return;
    signal?.addEventListener('abort', onAbort, { once: true });
    if (this.maxWaitMs === Infinity) return;
    // Re-arm if the timer fires before the clock reads the deadline (real timers can be early).
    const arm = (): void => {
      cancelTimer = clock.setTimer(Math.max(0, start + this.maxWaitMs - clock.now()), () => {
        this.expire(clock.now());
        if (!settled) arm();
      });
    };
    arm();
  }

  private releaser(clock: Clock, grantedAt: number): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const now = clock.now();
      this.release(now, now - grantedAt);
    };
  }

  /** Hands free slots to the oldest live waiters. */
  private grant(now: number): void {
    while (this.running < this.max) {
      const w = this.peek();
      if (w === undefined) return;
      this.kill(w);
      this.running++;
      w.onGrant(now);
    }
  }

  /** The oldest live waiter, skipping (and dropping) dead entries at the head. */
  private peek(): Waiter | undefined {
    const q = this.queue;
    while (this.head < q.length) {
      const w = q[this.head];
      if (w.live) {
        if (this.head >= TRIM_AT && this.head * 2 >= q.length) this.trim();
        return w;
      }
      this.head++;
      this.dead--;
    }
    if (this.head > 0) {
      q.length = 0;
      this.head = 0;
    }
    return undefined;
  }

  /** Marks a waiter as gone; it stays in the array until the head passes it. */
  private kill(w: Waiter): void {
    w.live = false;
    this.live--;
    this.dead++;
  }

  /** Binary search: ids are pushed in increasing order. */
  private find(id: number): Waiter | undefined {
    const q = this.queue;
    let lo = this.head;
    let hi = q.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const w = q[mid];
      if (w.id === id) return w;
      if (w.id < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }

  /** Amortised O(1): runs once per TRIM_AT or more grants, moving at most as many entries. */
  private trim(): void {
    this.queue.splice(0, this.head);
    this.head = 0;
  }

  private compact(): void {
    this.queue = this.queue.slice(this.head).filter((w) => w.live);
    this.head = 0;
    this.dead = 0;
  }

  private sample(heldMs: number): void {
    this.meanHoldMs = this.samples++ === 0 ? heldMs : this.meanHoldMs + EWMA_ALPHA * (heldMs - this.meanHoldMs);
  }
}
