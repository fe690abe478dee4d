import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WindowCounter } from '../../src/engine/window-counter.js';

describe('WindowCounter', () => {
  it('sums per field over the current bucket and the ones before it', () => {
    const w = new WindowCounter({ windowMs: 1000, buckets: 4, fields: 2 });
    w.add(0, 1, 0);
    w.add(1, 5, 100);
    w.add(0, 2, 260);
    expect(w.total(0, 260)).toBe(3);
    expect(w.total(1, 260)).toBe(5);
    // bucket 0 ([0, 250)) leaves the window when the head reaches bucket 4 ([1000, 1250)).
    expect(w.total(0, 999)).toBe(3);
    expect(w.total(0, 1000)).toBe(2);
    expect(w.total(1, 1000)).toBe(0);
    expect(w.total(0, 1250)).toBe(0);
  });

  it('clears everything after a jump longer than the window', () => {
    const w = new WindowCounter({ windowMs: 1000, buckets: 10, fields: 1 });
    w.add(0, 7, 5);
    expect(w.total(0, 50_000)).toBe(0);
    w.add(0, 1, 50_001);
    expect(w.total(0, 50_002)).toBe(1);
  });

  it('treats time going backwards as the current bucket', () => {
    const w = new WindowCounter({ windowMs: 1000, buckets: 10, fields: 1 });
    w.add(0, 1, 500);
    w.add(0, 1, 400);
    expect(w.total(0, 500)).toBe(2);
  });

  it('rejects bad specs', () => {
    expect(() => new WindowCounter({ windowMs: -1, buckets: 1, fields: 1 }, 'w')).toThrow(
      /w.windowMs must be a number > 0, got -1/,
    );
    expect(() => new WindowCounter({ windowMs: 1, buckets: 0, fields: 1 }, 'w')).toThrow(/w.buckets/);
  });

  it('property: total equals a brute-force sum over the bucket-aligned window', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.array(fc.record({ dt: fc.integer({ min: 0, max: 700 }), n: fc.integer({ min: 0, max: 9 }) }), {
          maxLength: 200,
        }),
        (buckets, ops) => {
          const windowMs = 1200;
          const bucketMs = windowMs / buckets;
          const w = new WindowCounter({ windowMs, buckets, fields: 1 });
          const events: Array<[number, number]> = [];
          let now = 0;
          for (const { dt, n } of ops) {
            now += dt;
            w.add(0, n, now);
            events.push([now, n]);
            const from = (Math.floor(now / bucketMs) - buckets + 1) * bucketMs;
            const expected = events.filter(([t]) => t >= from - 1e-9).reduce((s, [, k]) => s + k, 0);
            expect(w.total(0, now)).toBe(expected);
          }
        },
      ),
    );
  });
});
