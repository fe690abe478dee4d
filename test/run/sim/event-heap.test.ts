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

  it('stops after `limit` events, says how many fired, and keeps its clock at the last one', () => {
    const heap = new EventHeap();
    const seen: number[] = [];
    const h = heap.register({ handle: (_kind, id) => seen.push(id) });
    for (let i = 0; i < 5; i++) heap.schedule(10 + i, h, 0, i);
    expect(heap.runUntil(100, 2)).toBe(2);
    expect(seen).toEqual([0, 1]);
    expect(heap.now()).toBe(11);
    expect(heap.runUntil(100, 2)).toBe(2);
    expect(heap.runUntil(100, 2)).toBe(1);
    expect(seen).toEqual([0, 1, 2, 3, 4]);
  });

  it('never schedules into the past', () => {
    const heap = new EventHeap();
    const seen: number[] = [];
    const h = heap.register({ handle: (_k, _i, now) => seen.push(now) });
    heap.schedule(200, h, 0, 0);
    heap.runUntil(100);
    expect(heap.now()).toBe(100);
    heap.schedule(50, h, 0, 0);
    heap.runUntil(Infinity);
    expect(seen).toEqual([100, 200]);
  });

  it('with `advance` false keeps its clock at the last event fired, not the horizon', () => {
    const heap = new EventHeap();
    const seen: number[] = [];
    const h = heap.register({ handle: (_k, _i, now) => seen.push(now) });
    heap.schedule(10, h, 0, 0);
    heap.schedule(200, h, 0, 1);
    heap.runUntil(11, Infinity, false);
    expect(heap.now()).toBe(10);
    heap.schedule(10.5, h, 0, 2); // due before the horizon looked at: keeps its own time
    heap.runUntil(Infinity);
    expect(seen).toEqual([10, 10.5, 200]);
  });

  it('keeps its clock at the last event once nothing is left', () => {
    const heap = new EventHeap();
    const h = heap.register({ handle: () => {} });
    heap.schedule(30, h, 0, 0);
    heap.runUntil(1000);
    expect(heap.now()).toBe(30);
    expect(heap.pending).toBe(0);
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
        for (let k = 1; k < out.length; k++)
          expect(timeOf.get(out[k])!).toBeGreaterThanOrEqual(timeOf.get(out[k - 1])!);
        // Ties among the originally scheduled keep their order.
        const original = out.filter((id) => id < times.length);
        for (let k = 1; k < original.length; k++) {
          if (times[original[k]] === times[original[k - 1]]) expect(original[k]).toBeGreaterThan(original[k - 1]);
        }
      }),
    );
  });

  it('property: fires exactly what a reference sort by (time, sequence) fires, lanes and heap mixed', () => {
    // Handlers reschedule with constant delays (which the queue files in its fixed-delay
    // lanes once more than a few dozen events wait) and with one-off delays (the heap), with
    // thousands pending, and whole-number times so lanes and heap often tie, run in steps: the
    // order must be a sort by (time, then scheduling order).
    const delay = fc.oneof(
      fc.constantFrom(0, 1, 100, 200, 0.1 + 0.2, 1000 / 412),
      fc.double({ min: 0, max: 300, noNaN: true }),
    );
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.oneof(fc.integer({ min: 0, max: 500 }), fc.double({ min: 0, max: 500, noNaN: true })),
            fc.array(delay, { minLength: 1, maxLength: 4 }),
          ),
          { minLength: 100, maxLength: 2000, size: 'max' },
        ),
        fc.integer({ min: 1, max: 400 }),
        (seeds, step) => {
          const heap = new EventHeap();
          const fired: Array<[number, number]> = []; // [time, event number]
          const ref: Array<{ at: number; seq: number; n: number }> = [];
          let seq = 0;
          const chains = seeds.map(([, next]) => next);
          const add = (at: number, n: number): void => {
            ref.push({ at: Math.max(at, heap.now()), seq: seq++, n });
            heap.schedule(at, h, 0, n);
          };
          const h = heap.register({
            handle: (_k, n, now) => {
              fired.push([now, n]);
              const chain = chains[n % seeds.length];
              const hop = Math.floor(n / seeds.length);
              if (hop < chain.length) add(now + chain[hop], n + seeds.length);
            },
          });
          seeds.forEach(([at], i) => add(at, i));
          for (let t = 0; heap.pending > 0; t += step) heap.runUntil(t);
          const expected = [...ref].sort((a, b) => a.at - b.at || a.seq - b.seq).map((e) => [e.at, e.n]);
          expect(fired).toEqual(expected);
        },
      ),
      { numRuns: 40 },
    );
  });
});
