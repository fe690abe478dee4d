import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../src/engine/random.js';
import { EventHeap } from '../../src/run/sim/event-heap.js';
import { Arrivals } from '../../src/traffic/arrivals.js';
import type { ArrivalConfig } from '../../src/traffic/config.js';
import { rootFilter } from '../../src/traffic/root-share.js';

/** The intended starts the arrivals give in a run of `durationMs` (of one share of it, with `share`). */
function starts(cfg: ArrivalConfig, durationMs: number, share?: { index: number; of: number }): number[] {
  const heap = new EventHeap();
  const out: number[] = [];
  const a = new Arrivals(cfg, durationMs, heap, (t) => out.push(t), new SeededRandom(3), 0, rootFilter(3, share));
  a.begin();
  heap.runUntil(durationMs);
  return out;
}

describe('replayed arrivals (the fit of calibrate)', () => {
  const atMs = [0, 0, 12.5, 400, 401, 2999.5, 3000, 4100];

  it('start a root at each time given, in order, up to the end of the run', () => {
    expect(starts({ type: 'replay', atMs }, 3000)).toEqual([0, 0, 12.5, 400, 401, 2999.5]);
    expect(starts({ type: 'replay', atMs }, 5000)).toEqual(atMs);
    expect(starts({ type: 'replay', atMs: [] }, 5000)).toEqual([]);
  });

  it("split over a fleet's shares, each root once, at its own time", () => {
    const shares = [0, 1, 2].map((index) => starts({ type: 'replay', atMs }, 5000, { index, of: 3 }));
    expect(shares.flat().sort((a, b) => a - b)).toEqual(atMs);
    for (const s of shares) expect(s.length).toBeGreaterThanOrEqual(2);
  });
});
