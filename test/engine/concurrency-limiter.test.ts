import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { ConcurrencyLimiter } from '../../src/engine/concurrency-limiter.js';
import { ManualClock } from '../../src/engine/manual-clock.js';
import type { Clock } from '../../src/engine/clock.js';
import { OptionError, ShedError, StormlabError } from '../../src/engine/errors.js';

/** Records what happened to each waiter, in order. */
function recorder() {
  const events: string[] = [];
  const waiter = (name: string) =>
    [
      (now: number) => events.push(`${name} granted @${now}`),
      (now: number) => events.push(`${name} timeout @${now}`),
    ] as const;
  return { events, waiter };
}

function full(max: number, opts: { maxQueue?: number; maxWaitMs?: number } = {}): ConcurrencyLimiter {
  const l = new ConcurrencyLimiter({ maxInFlight: max, ...opts });
  for (let i = 0; i < max; i++) expect(l.tryAcquire(0)).toBe(true);
  return l;
}

describe('ConcurrencyLimiter core', () => {
  it('admits up to maxInFlight and refuses the next', () => {
    const l = full(2);
    expect(l.tryAcquire(0)).toBe(false);
    expect(l.inFlight).toBe(2);
    l.release(1);
    expect(l.tryAcquire(1)).toBe(true);
  });

  it('grants queued waiters in FIFO order on release', () => {
    const l = full(1);
    const { events, waiter } = recorder();
    l.enqueue(1, ...waiter('a'));
    l.enqueue(2, ...waiter('b'));
    l.enqueue(3, ...waiter('c'));
    expect(l.queued).toBe(3);
    l.release(10);
    l.release(20);
    expect(events).toEqual(['a granted @10', 'b granted @20']);
    expect(l.inFlight).toBe(1);
    expect(l.queued).toBe(1);
  });

  it('does not let tryAcquire jump the queue', () => {
    const l = full(1);
    const { events, waiter } = recorder();
    l.enqueue(0, ...waiter('a'));
    l.release(5); // the slot goes to a, synchronously
    expect(events).toEqual(['a granted @5']);
    expect(l.tryAcquire(5)).toBe(false);
  });

  it('returns -1 when the queue is full, and with maxQueue 0 never queues', () => {
    const l = full(1, { maxQueue: 2 });
    const { events, waiter } = recorder();
    expect(l.enqueue(0, ...waiter('a'))).toBeGreaterThan(0);
    expect(l.enqueue(0, ...waiter('b'))).toBeGreaterThan(0);
    expect(l.enqueue(0, ...waiter('c'))).toBe(-1);
    expect(l.queued).toBe(2);
    expect(full(1, { maxQueue: 0 }).enqueue(0, ...waiter('d'))).toBe(-1);
    expect(events).toEqual([]);
  });

  it('times waiters out with expire once they have waited maxWaitMs', () => {
    const l = full(1, { maxWaitMs: 100 });
    const { events, waiter } = recorder();
    l.enqueue(0, ...waiter('a'));
    l.enqueue(50, ...waiter('b'));
    expect(l.nextExpiryAt()).toBe(100);
    l.expire(99);
    expect(events).toEqual([]);
    l.expire(100);
    expect(events).toEqual(['a timeout @100']);
    expect(l.nextExpiryAt()).toBe(150);
    l.expire(1000);
    expect(events).toEqual(['a timeout @100', 'b timeout @1000']);
    expect(l.nextExpiryAt()).toBe(Infinity);
    expect(l.queued).toBe(0);
  });

  it('expires due waiters before granting when a release lands at the same instant', () => {
    const l = full(1, { maxWaitMs: 100 });
    const { events, waiter } = recorder();
    l.enqueue(0, ...waiter('a'));
    l.enqueue(10, ...waiter('b'));
    l.release(100);
    expect(events).toEqual(['a timeout @100', 'b granted @100']);
  });

  it('frees queue room held by waiters that are already due', () => {
    const l = full(1, { maxQueue: 1, maxWaitMs: 100 });
    const { events, waiter } = recorder();
    l.enqueue(0, ...waiter('a'));
    expect(l.enqueue(100, ...waiter('b'))).toBeGreaterThan(0);
    expect(events).toEqual(['a timeout @100']);
  });

  it('cancel removes a waiter so it is neither granted nor timed out', () => {
    const l = full(1, { maxWaitMs: 100 });
    const { events, waiter } = recorder();
    const a = l.enqueue(0, ...waiter('a'));
    l.enqueue(5, ...waiter('b'));
    expect(l.cancel(a)).toBe(true);
    expect(l.cancel(a)).toBe(false);
    expect(l.cancel(12345)).toBe(false);
    expect(l.queued).toBe(1);
    expect(l.nextExpiryAt()).toBe(105);
    l.release(6);
    expect(events).toEqual(['b granted @6']);
  });

  it('grants at once from enqueue when a slot is free', () => {
    const l = new ConcurrencyLimiter({ maxInFlight: 1 });
    const { events, waiter } = recorder();
    l.enqueue(3, ...waiter('a'));
    expect(events).toEqual(['a granted @3']);
    expect(l.inFlight).toBe(1);
    expect(l.queued).toBe(0);
  });

  it('throws on a release with nothing in flight', () => {
    expect(() => new ConcurrencyLimiter().release(0)).toThrow(StormlabError);
  });

  it('estimates the wait from the EWMA of hold times', () => {
    const l = full(2);
    expect(l.estimatedWaitMs(0)).toBe(0); // no sample yet
    l.release(0, 100); // mean 100 (first sample)
    expect(l.estimatedWaitMs(0)).toBe(0); // a slot is free: no wait
    expect(l.tryAcquire(0)).toBe(true);
    l.release(0, 200); // mean 100 + 0.2 × (200 − 100) = 120
    expect(l.tryAcquire(0)).toBe(true);
    expect(l.estimatedWaitMs(0)).toBe(120); // ceil(1 / 2) rounds
    const noop = (): void => {};
    l.enqueue(0, noop, noop);
    expect(l.estimatedWaitMs(0)).toBe(120); // ceil(2 / 2)
    l.enqueue(0, noop, noop);
    expect(l.estimatedWaitMs(0)).toBe(240); // ceil(3 / 2)
  });

  it('rejects bad options, naming them', () => {
    expect(() => new ConcurrencyLimiter({ maxInFlight: 0 })).toThrow(OptionError);
    expect(() => new ConcurrencyLimiter({ maxInFlight: 1.5 })).toThrow(
      /concurrencyLimiter\.maxInFlight must be an integer >= 1, got 1\.5/,
    );
    expect(() => new ConcurrencyLimiter({ maxQueue: -1 })).toThrow(
      /concurrencyLimiter\.maxQueue must be an integer >= 0, got -1/,
    );
    expect(() => new ConcurrencyLimiter({ maxWaitMs: NaN })).toThrow(
      /concurrencyLimiter\.maxWaitMs must be a number >= 0, got NaN/,
    );
  });

  it('keeps FIFO order and its counts under random enqueue/cancel/release/expire', () => {
    type Op = { kind: 'acquire' | 'release' | 'cancel' | 'advance'; n: number };
    const opArb = fc.record({
      kind: fc.constantFrom('acquire', 'release', 'cancel', 'advance') as fc.Arbitrary<Op['kind']>,
      n: fc.nat(200),
    });
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 200 }), (ops) => {
        const l = new ConcurrencyLimiter({ maxInFlight: 3, maxQueue: 5, maxWaitMs: 100 });
        const waiting: number[] = [];
        const served: number[] = [];
        let now = 0;
        const leave = (id: number): void => void waiting.splice(waiting.indexOf(id), 1);
        for (const op of ops) {
          if (op.kind === 'advance') {
            now += op.n;
            l.expire(now);
          } else if (op.kind === 'acquire' && !l.tryAcquire(now)) {
            const id: number = l.enqueue(
              now,
              () => {
                served.push(id);
                leave(id);
              },
              () => leave(id),
            );
            if (id !== -1) waiting.push(id);
          } else if (op.kind === 'release' && l.inFlight > 0) l.release(now);
          else if (op.kind === 'cancel' && waiting.length > 0) {
            const id = waiting[op.n % waiting.length];
            expect(l.cancel(id)).toBe(true);
            leave(id);
          }
          expect(l.queued).toBe(waiting.length);
          expect(l.inFlight).toBeLessThanOrEqual(3);
          expect(l.queued).toBeLessThanOrEqual(5);
          // Nobody waits while a slot is free.
          if (l.queued > 0) expect(l.inFlight).toBe(3);
        }
        expect([...served].sort((a, b) => a - b)).toEqual(served);
      }),
    );
  });
});

describe('ConcurrencyLimiter.acquire', () => {
  it('resolves at once when a slot is free, and the release function frees it once', async () => {
    const clock = new ManualClock();
    const l = new ConcurrencyLimiter({ maxInFlight: 1 });
    const release = await l.acquire(clock);
    expect(l.inFlight).toBe(1);
    clock.advance(40);
    release();
    release();
    expect(l.inFlight).toBe(0);
    expect(l.estimatedWaitMs(0)).toBe(0);
    expect(l.tryAcquire(0)).toBe(true);
    expect(l.estimatedWaitMs(0)).toBe(40); // the hold time was recorded
  });

  it('waits in the queue and resolves when a slot is released', async () => {
    const clock = new ManualClock();
    const l = new ConcurrencyLimiter({ maxInFlight: 1 });
    const first = await l.acquire(clock);
    const second = l.acquire(clock);
    expect(l.queued).toBe(1);
    clock.advance(30);
    first();
    const release = await second;
    expect(l.inFlight).toBe(1);
    expect(clock.pending).toBe(0); // the max-wait timer was cancelled
    release();
    expect(l.inFlight).toBe(0);
  });

  it('rejects with ShedError(concurrency) and the estimated wait when the queue is full', async () => {
    const clock = new ManualClock();
    const l = new ConcurrencyLimiter({ maxInFlight: 1, maxQueue: 0 });
    const release = await l.acquire(clock);
    clock.advance(50);
    release();
    await l.acquire(clock);
    const err = await l.acquire(clock).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ShedError);
    expect(err).toMatchObject({ reason: 'concurrency', retryAfterMs: 50 });
  });

  it('rejects with ShedError(queue_timeout) when the clock passes maxWaitMs', async () => {
    const clock = new ManualClock();
    const l = new ConcurrencyLimiter({ maxInFlight: 1, maxWaitMs: 100 });
    await l.acquire(clock);
    const waiting = l.acquire(clock).catch((e: unknown) => e);
    clock.advance(99);
    expect(l.queued).toBe(1);
    clock.advance(1);
    const err = await waiting;
    expect(err).toBeInstanceOf(ShedError);
    expect(err).toMatchObject({ reason: 'queue_timeout' });
    expect(l.queued).toBe(0);
  });

  it("rejects with the signal's reason on abort and leaves the queue", async () => {
    const clock = new ManualClock();
    const l = new ConcurrencyLimiter({ maxInFlight: 1, maxWaitMs: 100 });
    await l.acquire(clock);
    const ac = new AbortController();
    const waiting = l.acquire(clock, ac.signal).catch((e: unknown) => e);
    ac.abort(new Error('caller gave up'));
    expect(await waiting).toMatchObject({ message: 'caller gave up' });
    expect(l.queued).toBe(0);
    expect(clock.pending).toBe(0);
    const pre = new AbortController();
    pre.abort(new Error('already'));
    await expect(l.acquire(clock, pre.signal)).rejects.toMatchObject({ message: 'already' });
  });

  it('re-arms the max-wait timer when a timer fires before the deadline (real timers can be early)', async () => {
    // Timers of 2 ms or more fire 1 ms early.
    const inner = new ManualClock();
    const early: Clock = { now: () => inner.now(), setTimer: (ms, fn) => inner.setTimer(ms > 1 ? ms - 1 : ms, fn) };
    const l = new ConcurrencyLimiter({ maxInFlight: 1, maxWaitMs: 100 });
    await l.acquire(early);
    const waiting = l.acquire(early).catch((e: unknown) => e);
    inner.advance(99);
    expect(l.queued).toBe(1);
    inner.advance(1);
    expect(await waiting).toMatchObject({ reason: 'queue_timeout' });
  });

  it('waits without a timer when maxWaitMs is Infinity', async () => {
    const clock = new ManualClock();
    const l = new ConcurrencyLimiter({ maxInFlight: 1, maxWaitMs: Infinity });
    const first = await l.acquire(clock);
    const second = l.acquire(clock);
    expect(clock.pending).toBe(0);
    clock.advance(1e9);
    first();
    expect(typeof (await second)).toBe('function');
  });
});
