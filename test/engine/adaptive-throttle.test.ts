import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AdaptiveThrottle } from '../../src/engine/adaptive-throttle.js';
import { SeededRandom } from '../../src/engine/random.js';
import { MemoryStore } from '../../src/engine/store.js';

const rng = () => new SeededRandom(42);

describe('AdaptiveThrottle', () => {
  it('never drops while the upstream accepts everything', () => {
    const t = new AdaptiveThrottle({}, rng());
    for (let i = 0; i < 10_000; i++) {
      expect(t.tryAcquire(i)).toBe(true);
      t.record(true, i);
    }
    expect(t.dropProbability(10_000)).toBe(0);
  });

  it('follows the SRE formula, counting requests before the call', () => {
    const t = new AdaptiveThrottle({ k: 2, maxDropProbability: 1, minRequests: 0 }, rng());
    for (let i = 0; i < 10; i++) if (t.tryAcquire(0)) t.record(i < 2, 0);
    // requests 10 (all answered: dropped or recorded), accepts 2: (10 − 2·2) / (10 + 1)
    expect(t.dropProbability(0)).toBeCloseTo(6 / 11, 12);
    t.tryAcquire(0); // counted even when it is dropped
    expect(t.snapshot(0).requests).toBe(11);
  });

  it('drops about p of the requests at full outage and caps p at maxDropProbability', () => {
    const t = new AdaptiveThrottle({ k: 2, maxDropProbability: 0.9 }, rng());
    let allowed = 0;
    for (let i = 0; i < 20_000; i++) {
      if (!t.tryAcquire(i)) continue;
      allowed++;
      t.record(false, i);
    }
    expect(t.dropProbability(20_000)).toBe(0.9);
    expect(allowed / 20_000).toBeGreaterThan(0.09);
    expect(allowed / 20_000).toBeLessThan(0.115);
  });

  it('recovers by itself once the window slides past the failures', () => {
    const t = new AdaptiveThrottle({ windowMs: 120_000, buckets: 120 }, rng());
    for (let i = 0; i < 1000; i++) if (t.tryAcquire(i)) t.record(false, i);
    expect(t.dropProbability(1000)).toBeGreaterThan(0.8);
    expect(t.dropProbability(120_999)).toBe(0);
  });

  it('does not drop below minRequests in the window', () => {
    const t = new AdaptiveThrottle({ minRequests: 10, maxDropProbability: 1 }, rng());
    for (let i = 0; i < 10; i++) {
      expect(t.tryAcquire(0)).toBe(true);
      t.record(false, 0);
    }
    expect(t.dropProbability(0)).toBeCloseTo(10 / 11, 12);
  });

  it('leaves requests in flight out of the formula (slow calls are not refusals)', () => {
    const t = new AdaptiveThrottle({ minRequests: 0, maxDropProbability: 1 }, rng());
    for (let i = 0; i < 100; i++) expect(t.tryAcquire(i)).toBe(true); // 100 calls of several seconds
    expect(t.dropProbability(100)).toBe(0);
    for (let i = 0; i < 100; i++) t.record(false, 200);
    expect(t.dropProbability(200)).toBeCloseTo(100 / 101, 12);
  });

  it('leaves out the requests other processes sharing its window still have in flight', () => {
    const store = new MemoryStore(); // stands for a shared store: both throttles count in one window
    const a = new AdaptiveThrottle({ minRequests: 0, maxDropProbability: 1 }, rng(), store, 'shared');
    const b = new AdaptiveThrottle({ minRequests: 0, maxDropProbability: 1 }, rng(), store, 'shared');
    for (let i = 0; i < 50; i++) expect(a.tryAcquire(i)).toBe(true); // a's calls are still running
    for (let i = 0; i < 10; i++) if (b.tryAcquire(100 + i)) b.record(true, 100 + i);
    expect(b.dropProbability(200)).toBe(0); // not (60 − 2·10) / 61: a's requests have no answer yet
    for (let i = 0; i < 50; i++) a.record(false, 300);
    expect(b.dropProbability(300)).toBeCloseTo((60 - 2 * 10) / 61, 12);
  });

  it('forgets its history on forget(), counts afresh, and reads the window again a window later', () => {
    const t = new AdaptiveThrottle({ windowMs: 10_000, buckets: 10, minRequests: 5 }, rng());
    for (let i = 0; i < 20; i++) if (t.tryAcquire(0)) t.record(false, 0);
    expect(t.saturated(0)).toBe(true);
    t.forget(1_000);
    expect(t.dropProbability(1_000)).toBe(0);
    expect(t.snapshot(1_000)).toMatchObject({ requests: 0, accepts: 0 });
    for (let i = 0; i < 6; i++) if (t.tryAcquire(2_000)) t.record(i % 2 === 0, 2_000);
    expect(t.snapshot(2_000)).toMatchObject({ requests: 6, accepts: 3 });
    // a window after the forget, the window holds only what came after it
    expect(t.snapshot(11_500)).toMatchObject({ requests: 6, accepts: 3 });
    expect(t.saturated(11_500)).toBe(false);
  });

  it('admit() lets a request through without a draw; it is recorded like any other', () => {
    const t = new AdaptiveThrottle({ minRequests: 0, maxDropProbability: 1 }, rng());
    for (let i = 0; i < 50; i++) if (t.tryAcquire(0)) t.record(false, 0);
    expect(t.dropProbability(0)).toBeGreaterThan(0.9);
    t.admit();
    expect(t.snapshot(0).inFlight).toBe(1);
    t.record(true, 0);
    expect(t.snapshot(0)).toMatchObject({ inFlight: 0, accepts: 1 });
  });

  it('rejects bad options', () => {
    expect(() => new AdaptiveThrottle({ k: 0.5 }, rng())).toThrow(
      /throttle.k must be a number >= 1 and <= 1000, got 0.5/,
    );
    expect(() => new AdaptiveThrottle({ maxDropProbability: 1.5 }, rng())).toThrow(
      /throttle.maxDropProbability .* got 1.5/,
    );
  });

  it('property: p equals the formula on the window, and returns to 0 a window after failures stop', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1, max: 5, noNaN: true }),
        fc.array(fc.record({ dt: fc.integer({ min: 0, max: 5_000 }), ok: fc.boolean() }), { maxLength: 200 }),
        (k, ops) => {
          const windowMs = 60_000;
          const buckets = 60;
          const t = new AdaptiveThrottle({ k, windowMs, buckets, maxDropProbability: 1, minRequests: 0 }, rng());
          const reqs: number[] = [];
          const accs: number[] = [];
          let now = 0;
          for (const { dt, ok } of ops) {
            now += dt;
            const allowed = t.tryAcquire(now);
            reqs.push(now);
            if (allowed) {
              t.record(ok, now);
              if (ok) accs.push(now);
            }
            const from = (Math.floor(now / 1000) - buckets + 1) * 1000;
            const r = reqs.filter((x) => x >= from).length;
            const a = accs.filter((x) => x >= from).length;
            expect(t.dropProbability(now)).toBeCloseTo(Math.max(0, (r - k * a) / (r + 1)), 9);
          }
          // A window with only successes (or nothing) later, p is back to 0.
          const later = now + windowMs;
          expect(t.dropProbability(later)).toBe(0);
          for (let i = 0; i < 5; i++) {
            expect(t.tryAcquire(later + i)).toBe(true);
            t.record(true, later + i);
          }
          expect(t.dropProbability(later + 5)).toBe(0);
        },
      ),
    );
  });
});
