import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  SharedWindowCounter,
  type BucketCounts,
  type WindowDeltas,
} from '../../../src/engine/stores/shared-window-counter.js';
import { WindowCounter } from '../../../src/engine/window-counter.js';

const SPEC = { windowMs: 10_000, buckets: 10, fields: 2 };
const T0 = 1_764_540_000_000; // an epoch time, as systemClock gives

/** A stand-in for the shared store: adds deltas per bucket id and answers every count. */
class FakeShared {
  readonly buckets: BucketCounts = new Map();
  apply(d: WindowDeltas): BucketCounts {
    for (let i = 0; i < d.ids.length; i++) {
      let c = this.buckets.get(d.ids[i]);
      if (c === undefined) this.buckets.set(d.ids[i], (c = new Float64Array(SPEC.fields)));
      c[d.fields[i]] += d.values[i];
    }
    for (const id of this.buckets.keys()) if (id < d.minId) this.buckets.delete(id);
    return new Map([...this.buckets].map(([id, c]) => [id, Float64Array.from(c)]));
  }
}

function sync(w: SharedWindowCounter, shared: FakeShared, now: number): void {
  w.applyRemote(shared.apply(w.takeDeltas(now)), now, now + 100);
}

describe('SharedWindowCounter', () => {
  it('counts like a WindowCounter while it is alone and never synced (property)', () => {
    const op = fc.record({
      dt: fc.integer({ min: 0, max: 3000 }),
      field: fc.integer({ min: 0, max: 1 }),
      n: fc.integer({ min: 1, max: 5 }),
    });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
        const shared = new SharedWindowCounter(SPEC);
        const local = new WindowCounter(SPEC);
        let now = T0;
        for (const o of ops) {
          now += o.dt;
          shared.add(o.field, o.n, now);
          local.add(o.field, o.n, now);
          expect(shared.total(0, now)).toBe(local.total(0, now));
          expect(shared.total(1, now)).toBe(local.total(1, now));
        }
      }),
    );
  });

  it('sees what another process counted after both synced', () => {
    const store = new FakeShared();
    const a = new SharedWindowCounter(SPEC);
    const b = new SharedWindowCounter(SPEC);
    a.add(0, 5, T0);
    b.add(0, 2, T0 + 10);
    expect(a.total(0, T0 + 20)).toBe(5);
    sync(a, store, T0 + 20);
    expect(a.total(0, T0 + 20)).toBe(5); // b has not sent yet
    sync(b, store, T0 + 30);
    expect(b.total(0, T0 + 30)).toBe(7);
    sync(a, store, T0 + 40);
    expect(a.total(0, T0 + 40)).toBe(7);
    expect(a.total(1, T0 + 40)).toBe(0);
  });

  it('keeps what was added while a sync was on its way', () => {
    const store = new FakeShared();
    const a = new SharedWindowCounter(SPEC);
    a.add(1, 3, T0);
    const deltas = a.takeDeltas(T0);
    a.add(1, 4, T0 + 5); // after the send, before the answer
    a.applyRemote(store.apply(deltas), T0 + 6, T0 + 106);
    expect(a.total(1, T0 + 6)).toBe(7);
    sync(a, store, T0 + 200);
    expect(store.buckets.get(Math.floor(T0 / 1000))![1]).toBe(7); // each delta sent once
    expect(a.total(1, T0 + 200)).toBe(7);
  });

  it('sends a failed sync again, and drops deltas whose bucket left the window meanwhile', () => {
    const store = new FakeShared();
    const a = new SharedWindowCounter(SPEC);
    a.add(0, 1, T0);
    a.add(0, 2, T0 + 5_000);
    const lost = a.takeDeltas(T0 + 5_000);
    expect(a.hasDeltas).toBe(false);
    a.requeue(lost); // the store did not answer
    expect(a.hasDeltas).toBe(true);
    expect(a.total(0, T0 + 5_000)).toBe(3); // the local view never lost them
    a.total(0, T0 + 10_500); // the first bucket leaves the window
    sync(a, store, T0 + 10_500);
    expect([...store.buckets.values()].map((c) => c[0])).toEqual([2]);
    expect(a.total(0, T0 + 10_500)).toBe(2);
  });

  it('slides shared counts out of the window between syncs', () => {
    const store = new FakeShared();
    const a = new SharedWindowCounter(SPEC);
    const b = new SharedWindowCounter(SPEC);
    b.add(0, 4, T0);
    sync(b, store, T0);
    sync(a, store, T0 + 1_000);
    expect(a.total(0, T0 + 9_999)).toBe(4);
    expect(a.total(0, T0 + 10_000)).toBe(0);
  });

  it('answers stableUntil no later than the next sync, which may bring other counts', () => {
    const a = new SharedWindowCounter(SPEC);
    expect(a.stableUntil(T0 + 100)).toBe(T0 + 1_000); // never synced: the bucket's end
    a.applyRemote(new Map(), T0 + 100, T0 + 200);
    expect(a.stableUntil(T0 + 150)).toBe(T0 + 200);
    expect(a.stableUntil(T0 + 250)).toBe(T0 + 1_000);
  });

  it('ignores buckets ahead of its own head (another host whose clock runs ahead)', () => {
    const a = new SharedWindowCounter(SPEC);
    const ahead = Math.floor(T0 / 1000) + 3;
    a.applyRemote(new Map([[ahead, Float64Array.of(9, 0)]]), T0, T0 + 100);
    expect(a.total(0, T0)).toBe(0);
  });

  it('names the bad option', () => {
    expect(() => new SharedWindowCounter({ ...SPEC, buckets: 0 }, 'retry-budget')).toThrow(/retry-budget\.buckets/);
  });
});
