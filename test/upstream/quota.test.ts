import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { Quota } from '../../src/upstream/quota.js';
import { OptionError } from '../../src/engine/errors.js';

describe('Quota', () => {
  it('counts takes over a sliding 60 s window', () => {
    const q = new Quota(10);
    q.take(4, 0);
    q.take(3, 30_000);
    expect(q.used(59_999)).toBe(7);
    expect(q.remaining(59_999)).toBe(3);
    expect(q.used(60_000)).toBe(3); // the first take leaves the window at exactly t + 60 s
    expect(q.used(90_000)).toBe(0);
    expect(q.remaining(90_000)).toBe(10);
  });

  it('says exactly when a refused amount fits, and it does fit then', () => {
    const q = new Quota(10);
    q.take(4, 0);
    q.take(3, 1_000);
    q.take(3, 2_000);
    expect(q.waitMs(1, 5_000)).toBe(55_000); // the 4 taken at 0 free at 60 s
    expect(q.waitMs(5, 5_000)).toBe(56_000); // needs the 3 taken at 1 s as well
    expect(q.tryTake(5, 60_999)).toBe(false);
    expect(q.tryTake(5, 61_000)).toBe(true);
  });

  it('answers 0 when it fits and Infinity when it never can', () => {
    const q = new Quota(10);
    expect(q.waitMs(10, 0)).toBe(0);
    expect(q.waitMs(11, 0)).toBe(Infinity);
    expect(q.tryTake(11, 0)).toBe(false);
    expect(q.used(0)).toBe(0);
  });

  it('resets when the newest take leaves the window', () => {
    const q = new Quota(100);
    expect(q.resetMs(0)).toBe(0);
    q.take(1, 1_000);
    q.take(1, 6_000);
    expect(q.resetMs(10_000)).toBe(56_000);
    expect(q.resetMs(66_000)).toBe(0);
  });

  it('takes a custom window and rejects bad limits with the option named', () => {
    const q = new Quota(1, 1_000);
    q.take(1, 0);
    expect(q.waitMs(1, 400)).toBe(600);
    expect(() => new Quota(0, 60_000, 'primary.rpm')).toThrow(OptionError);
    expect(() => new Quota(-1, 60_000, 'primary.rpm')).toThrow(/primary\.rpm\.limit must be a number > 0, got -1/);
    expect(() => new Quota(1, 0, 'x')).toThrow(/x\.windowMs/);
  });

  it('grows its ring past 16 entries and keeps them in order', () => {
    const q = new Quota(1_000);
    for (let t = 0; t < 100; t++) q.take(1, t * 10);
    expect(q.used(990)).toBe(100);
    expect(q.used(60_000 + 495)).toBe(50);
    for (let t = 0; t < 100; t++) q.take(2, 70_000 + t);
    expect(q.used(70_100)).toBe(200);
  });

  it('property: tryTake keeps every 60 s window within the limit, and waitMs is exact', () => {
    const op = fc.record({ dt: fc.integer({ min: 0, max: 20_000 }), amount: fc.integer({ min: 1, max: 40 }) });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
        const q = new Quota(100);
        const taken: Array<[number, number]> = [];
        let now = 0;
        for (const { dt, amount } of ops) {
          now += dt;
          const wait = q.waitMs(amount, now);
          if (q.tryTake(amount, now)) {
            expect(wait).toBe(0);
            taken.push([now, amount]);
          } else {
            expect(wait).toBeGreaterThan(0);
            // One ms earlier it still would not fit; at the wait it would.
            const probe = new Quota(100);
            for (const [t, a] of taken) probe.take(a, t);
            if (wait > 1) expect(probe.waitMs(amount, now + wait - 1)).toBeGreaterThan(0);
            expect(probe.waitMs(amount, now + wait)).toBe(0);
          }
          const inWindow = taken.filter(([t]) => t > now - 60_000).reduce((s, [, a]) => s + a, 0);
          expect(inWindow).toBeLessThanOrEqual(100);
          expect(q.used(now)).toBe(inWindow);
        }
      }),
    );
  });
});

describe('Quota entries', () => {
  it('merges takes within one millisecond, counting them until the latest one leaves', () => {
    const q = new Quota(10);
    q.take(2, 100.1);
    q.take(3, 100.7);
    expect(q.waitMs(6, 200)).toBe(Math.ceil(100.7 + 60_000 - 200));
    expect(q.used(60_100.5)).toBe(5);
    expect(q.used(60_100.7)).toBe(0);
  });
});
