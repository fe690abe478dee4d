import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TokenBucket } from '../../src/engine/token-bucket.js';

describe('TokenBucket', () => {
  it('starts full, refills continuously, caps at capacity', () => {
    const b = new TokenBucket({ capacity: 10, refillPerSec: 5 });
    expect(b.tryTake(10, 0)).toBe(true);
    expect(b.tryTake(1, 0)).toBe(false);
    expect(b.available(1000)).toBeCloseTo(5);
    expect(b.available(60_000)).toBe(10);
  });

  it('says how long until n fits, and Infinity beyond capacity', () => {
    const b = new TokenBucket({ capacity: 10, refillPerSec: 2, initial: 0 });
    expect(b.waitMs(4, 0)).toBe(2000);
    expect(b.tryTake(4, 1999)).toBe(false);
    expect(b.tryTake(4, 2000)).toBe(true);
    expect(b.waitMs(11, 2000)).toBe(Infinity);
  });

  it('turns an over-charge into debt that refill pays before anything is available', () => {
    const b = new TokenBucket({ capacity: 10, refillPerSec: 1 });
    b.charge(15, 0);
    expect(b.available(0)).toBe(0);
    expect(b.debt(0)).toBe(5);
    expect(b.available(5000)).toBe(0);
    expect(b.available(6000)).toBeCloseTo(1);
    b.charge(3, 6000);
    b.refund(10, 6000);
    expect(b.debt(6000)).toBe(0);
    expect(b.available(6000)).toBeCloseTo(8);
  });

  it('rejects bad specs', () => {
    expect(() => new TokenBucket({ capacity: 0, refillPerSec: 1 }, 'tpm')).toThrow(
      /tpm.capacity must be a number > 0, got 0/,
    );
    expect(() => new TokenBucket({ capacity: 5, refillPerSec: 1, initial: 6 }, 'tpm')).toThrow(/tpm.initial/);
  });

  it('property: tokens stay in [0, capacity] and tokens − debt is conserved without refill', () => {
    const op = fc.oneof(
      fc.record({ k: fc.constant('take' as const), n: fc.double({ min: 0, max: 30, noNaN: true }) }),
      fc.record({ k: fc.constant('charge' as const), n: fc.double({ min: 0, max: 30, noNaN: true }) }),
      fc.record({ k: fc.constant('refund' as const), n: fc.double({ min: 0, max: 30, noNaN: true }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 100 }), (ops) => {
        const b = new TokenBucket({ capacity: 20, refillPerSec: 0 });
        let net = 20;
        for (const { k, n } of ops) {
          if (k === 'take') {
            if (b.tryTake(n, 0)) net -= n;
          } else if (k === 'charge') {
            b.charge(n, 0);
            net -= n;
          } else {
            b.refund(n, 0);
            net = Math.min(20, net + n);
          }
          const tokens = b.available(0);
          expect(tokens).toBeGreaterThanOrEqual(0);
          expect(tokens).toBeLessThanOrEqual(20);
          expect(tokens - b.debt(0)).toBeCloseTo(net, 6);
        }
      }),
    );
  });
});
