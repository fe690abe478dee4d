import { ConcurrencyLimiter } from '../engine/concurrency-limiter.js';
import type { EventHandler, Scheduler } from '../upstream/scheduler.js';
import type { InferenceConfig } from './tool-call-config.js';

/** Sends call `id`'s leaf attempt now (to its current target), or ends it refused. */
export interface InferenceDriver {
  /** The attempt `serial` of call `id` is still the one in flight. */
  current(id: number, serial: number): boolean;
  send(id: number, now: number): void;
  /** No slot within the max wait (or no room in the queue): fall back (`fallback`) or end the attempt refused. */
  giveUp(id: number, fallback: boolean, now: number): void;
}

/** What the metrics hear about the inference queue. */
export interface InferenceObserver {
  /** An attempt joined the queue, with the wait it was told to expect. */
  inferenceQueued(estimatedWaitMs: number, t: number): void;
  /** An attempt got no slot in time: sent to the fallback model, or refused. */
  inferenceGaveUp(fallback: boolean, t: number): void;
}

/**
 * The second of the three layers of limits: leaf (model) attempts take a slot of the engine's
 * `ConcurrencyLimiter` before they go out — `maxInFlight` at once, then a bounded FIFO queue
 * with an estimated wait (queued ahead ÷ slots × the mean hold time) — and one that has no
 * slot within `maxWaitMs` (or finds the queue full) goes to the smaller fallback model when
 * there is one (a degraded answer), else ends refused. A slot is held until the attempt's
 * answer or its timeout.
 */
export class InferenceGate implements EventHandler {
  private readonly limiter: ConcurrencyLimiter;
  /** Per call: when it took its slot (−1: holds none), and its waiter id while queued (0: none). */
  private grantedAt = new Float64Array(0);
  private waiter = new Int32Array(0);
  private readonly handlerId: number;
  private expiryAt = Infinity;

  constructor(
    private readonly cfg: InferenceConfig,
    private readonly scheduler: Scheduler,
    private readonly observer: InferenceObserver | undefined,
    private readonly driver: InferenceDriver,
  ) {
    this.limiter = new ConcurrencyLimiter({
      maxInFlight: cfg.maxInFlight,
      maxQueue: cfg.maxQueue,
      maxWaitMs: cfg.maxWaitMs,
    });
    this.handlerId = scheduler.register(this);
  }

  /** The leaf attempt `serial` of call `id` wants to go out now. */
  admit(id: number, serial: number, now: number): void {
    this.ensure(id);
    if (this.limiter.tryAcquire(now)) return this.granted(id, now);
    this.observer?.inferenceQueued(this.limiter.estimatedWaitMs(now), now);
    const w = this.limiter.enqueue(
      now,
      (t) => {
        this.waiter[id] = 0;
        if (this.driver.current(id, serial)) return this.granted(id, t);
        this.limiter.release(t);
      },
      (t) => {
        this.waiter[id] = 0;
        if (this.driver.current(id, serial)) this.refuse(id, t);
      },
    );
    if (w === -1) return this.refuse(id, now);
    if (this.waiter[id] === 0 && this.grantedAt[id] >= 0) return; // granted at once inside enqueue
    this.waiter[id] = w;
    this.armExpiry(now);
  }

  /** The leaf attempt of call `id` ended (answered, timed out): its slot or its place in the queue is freed. */
  release(id: number, now: number): void {
    if (id >= this.grantedAt.length) return;
    if (this.waiter[id] !== 0) {
      this.limiter.cancel(this.waiter[id]);
      this.waiter[id] = 0;
    }
    if (this.grantedAt[id] < 0) return;
    const held = now - this.grantedAt[id];
    this.grantedAt[id] = -1;
    this.limiter.release(now, held);
  }

  handle(_kind: number, _id: number, now: number): void {
    this.expiryAt = Infinity;
    this.limiter.expire(now);
    this.armExpiry(now);
  }

  private granted(id: number, now: number): void {
    this.grantedAt[id] = now;
    this.driver.send(id, now);
  }

  private refuse(id: number, now: number): void {
    const fallback = this.cfg.fallback !== undefined;
    this.observer?.inferenceGaveUp(fallback, now);
    this.driver.giveUp(id, fallback, now);
  }

  private armExpiry(now: number): void {
    const at = this.limiter.nextExpiryAt();
    if (at === Infinity || at >= this.expiryAt) return;
    this.expiryAt = at;
    this.scheduler.schedule(Math.max(now, at), this.handlerId, 0, 0);
  }

  private ensure(id: number): void {
    if (id < this.grantedAt.length) {
      return;
    }
    const n = Math.max(1024, id + 1, this.grantedAt.length * 2);
    const g = new Float64Array(n).fill(-1);
    g.set(this.grantedAt);
    const w = new Int32Array(n);
    w.set(this.waiter);
    this.grantedAt = g;
    this.waiter = w;
  }
}
