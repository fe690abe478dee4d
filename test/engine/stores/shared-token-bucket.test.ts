import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SharedTokenBucket } from '../../../src/engine/stores/shared-token-bucket.js';
import { TokenBucket } from '../../../src/engine/token-bucket.js';

const T0 = 1_764_540_000_000;

describe('SharedTokenBucket', () => {
  it('behaves like a TokenBucket while it is the only sharer (property)', () => {
    const op = fc.record({
      dt: fc.integer({ min: 0, max: 2000 }),
      kind: fc.constantFrom('take', 'charge', 'refund'),
      n: fc.integer({ min: 1, max: 15 }),
    });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const spec = { capacity: 20, refillPerSec: 5 };
        const shared = new SharedTokenBucket(spec);
        const local = new TokenBucket(spec);
        let now = T0;
        for (const o of ops) {
          now += o.dt;
          if (o.kind === 'take') expect(shared.tryTake(o.n, now)).toBe(local.tryTake(o.n, now));
          else if (o.kind === 'charge') shared.charge(o.n, now), local.charge(o.n, now);
          else shared.refund(o.n, now), local.refund(o.n, now);
          expect(shared.available(now)).toBeCloseTo(local.available(now), 9);
          expect(shared.debt(now)).toBeCloseTo(local.debt(now), 9);
          expect(shared.waitMs(3, now)).toBeCloseTo(local.waitMs(3, now), 6);
        }
      }),
    );
  });

  it('hands the store what it spent and refunded, once', () => {
    const b = new SharedTokenBucket({ capacity: 10, refillPerSec: 0 });
    b.tryTake(3, T0);
    b.charge(2, T0);
    b.refund(1, T0);
    expect(b.tryTake(100, T0)).toBe(false); // a refused take spends nothing
    expect(b.takeDeltas()).toMatchObject({ spent: 5, refunded: 1 });
    expect(b.takeDeltas()).toMatchObject({ spent: 0, refunded: 0 });
  });

  it('needs a sync until its first one, then while it was active within activeMs', () => {
    const b = new SharedTokenBucket({ capacity: 10, refillPerSec: 0 });
    expect(b.needsSync(T0, 2000)).toBe(true);
    b.takeDeltas();
    b.applyRemote({ tokens: 10, debt: 0, sharers: 1 }, T0); // joined at T0
    expect(b.needsSync(T0 + 1999, 2000)).toBe(true); // it counts among the sharers until T0 + 2 s
    expect(b.needsSync(T0 + 2000, 2000)).toBe(false); // idle: left out of syncs
    b.available(T0 + 3000);
    expect(b.needsSync(T0 + 3000, 2000)).toBe(false); // reading is not drawing
    b.tryTake(1, T0 + 5000);
    b.takeDeltas();
    expect(b.needsSync(T0 + 6000, 2000)).toBe(true);
    expect(b.needsSync(T0 + 7000, 2000)).toBe(false);
    b.tryTake(100, T0 + 8000);
    b.takeDeltas();
    expect(b.needsSync(T0 + 9000, 2000)).toBe(true); // refused: it wants its share
  });

  it('spends from its share of the shared level, refilled at its share of the rate', () => {
    const b = new SharedTokenBucket({ capacity: 100, refillPerSec: 10 });
    b.applyRemote({ tokens: 40, debt: 0, sharers: 4 }, T0);
    expect(b.share).toBe(4);
    expect(b.available(T0)).toBe(10);
    expect(b.tryTake(11, T0)).toBe(false);
    expect(b.tryTake(10, T0)).toBe(true);
    expect(b.available(T0 + 1000)).toBeCloseTo(2.5, 9); // 10/s ÷ 4
    expect(b.waitMs(5, T0 + 1000)).toBeCloseTo(1000, 6);
    expect(b.available(T0 + 60_000)).toBe(25); // capped at capacity ÷ 4
  });

  it('applies what it spent while the sync was on its way on top of the answer', () => {
    const b = new SharedTokenBucket({ capacity: 100, refillPerSec: 0 });
    b.tryTake(10, T0);
    const sent = b.takeDeltas();
    b.tryTake(5, T0 + 1); // after the send
    b.applyRemote({ tokens: 100 - sent.spent, debt: 0, sharers: 1 }, T0 + 2);
    expect(b.available(T0 + 2)).toBe(85);
    expect(b.takeDeltas()).toMatchObject({ spent: 5, refunded: 0 });
  });

  it('lets a take bigger than a whole share go when the share is full, owing the rest', () => {
    const b = new SharedTokenBucket({ capacity: 1000, refillPerSec: 100 });
    b.applyRemote({ tokens: 1000, debt: 0, sharers: 4 }, T0);
    expect(b.tryTake(600, T0)).toBe(true); // share 250, full: goes, 350 owed
    expect(b.debt(T0)).toBe(350);
    expect(b.tryTake(600, T0)).toBe(false);
    expect(b.waitMs(600, T0)).toBeCloseTo((350 + 250) / (100 / 4 / 1000), 6);
    expect(b.tryTake(1001, T0 + 1e9)).toBe(false); // more than the whole bucket never fits
    expect(b.waitMs(1001, T0)).toBe(Infinity);
  });

  it('asks to count among the sharers on its first sync and whenever it was refused since the last', () => {
    const b = new SharedTokenBucket({ capacity: 10, refillPerSec: 0 });
    expect(b.takeDeltas().join).toBe(true); // first sync: join before drawing
    b.applyRemote({ tokens: 10, debt: 0, sharers: 2 }, T0);
    expect(b.takeDeltas().join).toBe(false);
    expect(b.tryTake(3, T0)).toBe(true);
    expect(b.takeDeltas()).toMatchObject({ spent: 3, join: false }); // drawing is joining enough
    expect(b.tryTake(3, T0)).toBe(false); // 2 left of its share: refused, but it wants its share
    expect(b.takeDeltas().join).toBe(true);
    expect(b.takeDeltas().join).toBe(false);
  });

  it('keeps the deltas of a failed sync for the next one', () => {
    const b = new SharedTokenBucket({ capacity: 10, refillPerSec: 0 });
    b.tryTake(4, T0);
    const d = b.takeDeltas();
    b.tryTake(1, T0);
    b.requeue(d);
    expect(b.takeDeltas()).toMatchObject({ spent: 5, refunded: 0 });
    expect(b.available(T0)).toBe(5);
  });
});
