import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventHeap } from '../../../src/run/sim/event-heap.js';

describe('EventHeap', () => {
  it('fires in time order, ties in scheduling order, and moves the clock', () => {
    const heap = new EventHeap();
    const seen: string[] = [];
    const h = heap.register({ handle: (kind, id, now) => seen.push(`${kind}:${id}@${now}`) });
    heap.schedule(20, h, 1, 1);
    heap.schedule(10, h, 2, 2);
    heap.schedule(20, h, 3, 3);
    heap.schedule(10, h, 4, 4);
    heap.runUntil(15);
    expect(seen).toEqual(['2:2@10', '4:4@10']);
    expect(heap.now()).toBe(15);
    heap.runUntil(Infinity);
    expect(seen).toEqual(['2:2@10', '4:4@10', '1:1@20', '3:3@20']);
  });

  it('never schedules into the past', () => {
    const heap = new EventHeap();
    const seen: number[] = [];
    const h = heap.register({ handle: (_k, _i, now) => seen.push(now) });
    heap.runUntil(100);
    heap.schedule(50, h, 0, 0);
    heap.runUntil(Infinity);
    expect(seen).toEqual([100]);
  });

  it('property: pops a stable sort of what was pushed, events scheduled from handlers included', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 50 }), { minLength: 1, maxLength: 3000 }), (times) => {
        const heap = new EventHeap();
        const out: number[] = [];
        const h = heap.register({
          handle: (kind, id, now) => {
            out.push(id);
            if (kind === 1) heap.schedule(now + 5, h, 0, times.length + id);
          },
        });
        times.forEach((t, i) => heap.schedule(t, h, i % 7 === 0 ? 1 : 0, i));
        heap.runUntil(Infinity);
        const expected = [
          ...times.map((t, i) => ({ t, i, s: i })),
          ...times.flatMap((t, i) => (i % 7 === 0 ? [{ t: t + 5, i: times.length + i, s: Infinity }] : [])),
        ];
        expect(out.length).toBe(expected.length);
        // Same multiset, and times never go backwards.
        expect([...out].sort((a, b) => a - b)).toEqual(expected.map((e) => e.i).sort((a, b) => a - b));
        const timeOf = new Map(expected.map((e) => [e.i, e.t]));
        for (let k = 1; k < out.length; k++) expect(timeOf.get(out[k])!).toBeGreaterThanOrEqual(timeOf.get(out[k - 1])!);
        // Ties among the originally scheduled keep their order.
        const original = out.filter((id) => id < times.length);
        for (let k = 1; k < original.length; k++) {
          if (times[original[k]] === times[original[k - 1]]) expect(original[k]).toBeGreaterThan(original[k - 1]);
        }
      }),
    );
  });
});
