import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../src/engine/random.js';
import { planShare } from '../../src/run/root-plan.js';
import type { RunSpec } from '../../src/run/run-spec.js';
import { EventHeap } from '../../src/run/sim/event-heap.js';
import { Arrivals } from '../../src/traffic/arrivals.js';
import type { ArrivalConfig } from '../../src/traffic/config.js';
import { rootFilter, shareOfRoot } from '../../src/traffic/root-share.js';

/** The intended starts of a run's roots, or of one share's. */
function starts(cfg: ArrivalConfig, seed: number, share?: { index: number; of: number }): number[] {
  const heap = new EventHeap();
  const out: number[] = [];
  const a = new Arrivals(cfg, 20_000, heap, (t) => out.push(t), new SeededRandom(seed), 0, rootFilter(seed, share));
  a.begin();
  heap.runUntil(20_000);
  return out;
}

const OPEN: ArrivalConfig[] = [
  { type: 'constant', rate: 50 },
  { type: 'poisson', rate: 80 },
  { type: 'ramp', from: 10, to: 90 },
  { type: 'burst', rate: 20, burstRate: 200, everyMs: 5000, lengthMs: 1000 },
];

describe('root shares of a fleet', () => {
  it('the same seed and N give the same split; another seed another one', () => {
    const a = Array.from({ length: 300 }, (_, n) => shareOfRoot(7, 3)(n));
    const b = Array.from({ length: 300 }, (_, n) => shareOfRoot(7, 3)(n));
    const c = Array.from({ length: 300 }, (_, n) => shareOfRoot(8, 3)(n));
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    // Every block of N roots deals one to each share: the shares never differ by more than one root.
    for (let blk = 0; blk < 100; blk++) expect([...a.slice(blk * 3, blk * 3 + 3)].sort()).toEqual([0, 1, 2]);
    expect(shareOfRoot(7, 1)(12)).toBe(0);
  });

  for (const cfg of OPEN)
    it(`${cfg.type}: the shares' roots are the run's, each once, at the times they have in the whole run`, () => {
      const whole = starts(cfg, 29);
      const shares = [0, 1, 2].map((index) => starts(cfg, 29, { index, of: 3 }));
      expect(
        shares
          .flat()
          .sort((x, y) => x - y)
          .map((t) => Math.round(t * 1000)),
      ).toEqual([...whole].sort((x, y) => x - y).map((t) => Math.round(t * 1000)));
      for (const s of shares) expect(Math.abs(s.length - whole.length / 3)).toBeLessThanOrEqual(1);
      // Twice the same: the split is the seed's.
      expect(starts(cfg, 29, { index: 1, of: 3 })).toEqual(shares[1]);
    });

  it('closed-loop users are split whole: each user belongs to one share', () => {
    const spec = {
      name: 'x',
      seed: 3,
      durationMs: 10_000,
      drainMs: 0,
      traffic: { arrival: { type: 'closed', users: 10, thinkMs: 100 } },
    } as unknown as RunSpec;
    const users = [0, 1, 2].map((index) => planShare(spec, { index, of: 3 }).users ?? []);
    expect(users.flat().sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(users.map((u) => u.length).sort()).toEqual([3, 3, 4]);
    expect(planShare(spec, { index: 0, of: 3 }).roots).toBeNull();
  });

  it("a share's plan counts the roots it would start, with their first and last intended times", () => {
    const spec = {
      name: 'x',
      seed: 29,
      durationMs: 20_000,
      drainMs: 0,
      traffic: { arrival: { type: 'poisson', rate: 80 } },
    } as unknown as RunSpec;
    const own = starts({ type: 'poisson', rate: 80 }, 29, { index: 2, of: 3 });
    expect(planShare(spec, { index: 2, of: 3 })).toEqual({
      index: 2,
      of: 3,
      roots: own.length,
      firstMs: Math.round(own[0]),
      lastMs: Math.round(own.at(-1)!),
    });
  });
});
