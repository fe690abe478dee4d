import type { EventHandler, Scheduler } from '../../src/upstream/scheduler.js';

interface Pending {
  at: number;
  seq: number;
  handler: number;
  kind: number;
  id: number;
}

/**
 * A tiny deterministic scheduler for tests: a sorted array of events, ties by the order they
 * were scheduled. `runUntil(t)` fires everything due at or before t, then sits at t.
 */
export class TestScheduler implements Scheduler {
  private t = 0;
  private seq = 0;
  private readonly handlers: EventHandler[] = [];
  private readonly queue: Pending[] = [];

  now(): number {
    return this.t;
  }

  register(handler: EventHandler): number {
    this.handlers.push(handler);
    return this.handlers.length - 1;
  }

  schedule(at: number, handler: number, kind: number, id: number): void {
    if (at < this.t) throw new Error(`scheduled at ${at}, before now ${this.t}`);
    const e = { at, seq: this.seq++, handler, kind, id };
    let i = this.queue.length;
    while (i > 0 && this.queue[i - 1].at > at) i--;
    this.queue.splice(i, 0, e);
  }

  /** Fires every event due at or before `t`, in time order; then the clock reads `t`. */
  runUntil(t: number): void {
    while (this.queue.length > 0 && this.queue[0].at <= t) {
      const e = this.queue.shift()!;
      this.t = e.at;
      this.handlers[e.handler].handle(e.kind, e.id, e.at);
    }
    this.t = Math.max(this.t, t);
  }

  /** Fires everything (bounded, so a runaway test fails instead of hanging). */
  runAll(maxEvents = 1_000_000): void {
    for (let n = 0; this.queue.length > 0; n++) {
      if (n >= maxEvents) throw new Error('runAll: too many events');
      this.runUntil(this.queue[0].at);
    }
  }

  get pending(): number {
    return this.queue.length;
  }
}
