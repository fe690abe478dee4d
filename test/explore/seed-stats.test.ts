import { describe, expect, it } from 'vitest';
import { meanInterval, pairedDifference, seedList, t95 } from '../../src/explore/seed-stats.js';
import { bySeed, withSeeds } from '../../src/explore/seeded-points.js';

describe('seed statistics', () => {
  it("uses Student's t for few seeds and the normal quantile for many", () => {
    expect(t95(1)).toBe(12.706);
    expect(t95(4)).toBe(2.776);
    expect(t95(30)).toBe(2.042);
    expect(t95(60)).toBeCloseTo(2.0, 6);
    expect(t95(1000)).toBe(1.96);
    expect(() => t95(0)).toThrow(RangeError);
  });

  it('gives the mean and its 95 % interval (worked by hand: 1..5 → 3 ± 2.776·√(2.5/5))', () => {
    const i = meanInterval([1, 2, 3, 4, 5]);
    expect(i.mean).toBe(3);
    expect(i.n).toBe(5);
    expect(i.high - i.mean).toBeCloseTo(2.776 * Math.sqrt(2.5 / 5), 9);
    expect(i.mean - i.low).toBeCloseTo(i.high - i.mean, 12);
    expect(meanInterval([4])).toEqual({ mean: 4, low: 4, high: 4, n: 1 });
    expect(() => meanInterval([])).toThrow(RangeError);
  });

  it('pairs seeds: a constant gain on noisy draws is told apart from 0, where the unpaired intervals overlap', () => {
    const noise = [10, 14, 9, 15, 12];
    const better = noise.map((x) => x + 1 + (x % 2) * 0.1);
    const a = meanInterval(better);
    const b = meanInterval(noise);
    expect(a.low).toBeLessThan(b.high); // side by side: within each other's noise
    const d = pairedDifference(better, noise);
    expect(d.low).toBeGreaterThan(0); // seed by seed: clearly better
    expect(() => pairedDifference([1], [1, 2])).toThrow(RangeError);
  });

  it('lists the seeds from the scenario seed on, wrapping at 2^32, and lays the tasks out point-major', () => {
    expect(seedList(7, 3)).toEqual([7, 8, 9]);
    expect(seedList(2 ** 32 - 1, 2)).toEqual([2 ** 32 - 1, 0]);
    const tasks = withSeeds([['a=1'], ['a=2']], [7, 8]);
    expect(tasks).toEqual([
      ['a=1', 'seed=7'],
      ['a=1', 'seed=8'],
      ['a=2', 'seed=7'],
      ['a=2', 'seed=8'],
    ]);
    expect(withSeeds([['a=1']], [])).toEqual([['a=1']]);
    expect(bySeed(['x7', 'x8', 'y7', 'y8'], 2)).toEqual([
      ['x7', 'x8'],
      ['y7', 'y8'],
    ]);
    expect(() => bySeed([1, 2, 3], 2)).toThrow(RangeError);
  });
});
