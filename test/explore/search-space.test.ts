import { describe, expect, it } from 'vitest';
import {
  gridSizeFor,
  searchSpace,
  type Dimension,
  type Score,
  type SearchOptions,
} from '../../src/explore/search-space.js';

type Fn = (p: number[]) => Score;

/** Runs the search on an analytic function, recording every batch it asked for. */
async function search(space: Dimension[], fn: Fn, opts: Partial<SearchOptions> = {}) {
  const batches: number[][][] = [];
  const result = await searchSpace(
    space,
    async (points) => {
      batches.push(points);
      return points.map(fn);
    },
    { goal: 'maximize', ...opts },
  );
  return { result, batches, all: batches.flat() };
}

describe('searchSpace', () => {
  it('finds a concave optimum that lies on the constraint boundary', async () => {
    // max −(x−2)² − (y−3)² subject to x + y ≤ 4: the unconstrained peak (2, 3) is infeasible;
    // the best feasible point is its projection on x + y = 4, (1.5, 2.5).
    const space = [
      { name: 'x', min: 0, max: 5 },
      { name: 'y', min: 0, max: 5 },
    ];
    const { result } = await search(space, ([x, y]) => ({
      objective: -((x - 2) ** 2) - (y - 3) ** 2,
      violation: Math.max(0, x + y - 4),
    }));
    expect(result.feasible).toBe(true);
    const [x, y] = result.best.point;
    expect(x + y).toBeLessThanOrEqual(4);
    expect(Math.hypot(x - 1.5, y - 2.5)).toBeLessThan(0.15);
    expect(result.best.score.objective!).toBeGreaterThan(-0.5 - 0.15);
  });

  it('finds the edge of a 1-D monotone objective under a constraint', async () => {
    // max x subject to x² ≤ 20: the answer is √20 ≈ 4.472, from below.
    const { result } = await search([{ name: 'x', min: 0, max: 10 }], ([x]) => ({
      objective: x,
      violation: Math.max(0, x * x - 20),
    }));
    expect(result.best.point[0]).toBeLessThanOrEqual(Math.sqrt(20));
    expect(result.best.point[0]).toBeGreaterThan(Math.sqrt(20) - 0.05);
  });

  it('minimizes too', async () => {
    const { result } = await search(
      [{ name: 'x', min: -3, max: 3 }],
      ([x]) => ({ objective: (x - 1.3) ** 2, violation: 0 }),
      { goal: 'minimize' },
    );
    expect(result.best.point[0]).toBeCloseTo(1.3, 1);
  });

  it('spaces a log dimension evenly in log terms and finds an optimum at its low end', async () => {
    const space: Dimension[] = [{ name: 'ratio', min: 0.001, max: 1, scale: 'log' }];
    const { result, batches } = await search(space, ([r]) => ({
      objective: -Math.abs(Math.log10(r / 0.03)),
      violation: 0,
    }));
    expect([...batches[0]].map((p) => p[0]).sort((a, b) => a - b)).toEqual([0.001, 0.00562, 0.0316, 0.178, 1]);
    expect(Math.abs(result.best.point[0] / 0.03 - 1)).toBeLessThan(0.03);
  });

  it('keeps integer dimensions whole and finds their best value beside a continuous one', async () => {
    const space: Dimension[] = [
      { name: 'attempts', min: 1, max: 10, integer: true },
      { name: 'k', min: 1, max: 4 },
    ];
    const { result, all } = await search(space, ([n, k]) => ({
      objective: -((n - 3.4) ** 2) - (k - 2.2) ** 2,
      violation: 0,
    }));
    for (const p of all) expect(Number.isInteger(p[0])).toBe(true);
    expect(result.best.point[0]).toBe(3);
    expect(result.best.point[1]).toBeCloseTo(2.2, 1);
  });

  it('converges on a small integer dimension without spending the budget', async () => {
    const { result, all } = await search([{ name: 'n', min: 1, max: 5, integer: true }], ([n]) => ({
      objective: -Math.abs(n - 4),
      violation: 0,
    }));
    expect(result.best.point).toEqual([4]);
    expect(result.stopped).toBe('converged');
    expect(all.map((p) => p[0]).sort()).toEqual([1, 2, 3, 4, 5]);
  });

  it('says when nothing is feasible and points at the least-bad region', async () => {
    // violation x + y + 1 > 0 everywhere; least bad at (0, 0) whatever the objective says.
    const space = [
      { name: 'x', min: 0, max: 5 },
      { name: 'y', min: 0, max: 5 },
    ];
    const { result } = await search(space, ([x, y]) => ({ objective: x + y, violation: x + y + 1 }));
    expect(result.feasible).toBe(false);
    expect(result.best.point).toEqual([0, 0]);
    expect(result.ranked.every((e) => e.score.violation > 0)).toBe(true);
  });

  it('ranks every feasible point above every infeasible one, whatever their objectives', async () => {
    const { result } = await search(
      [{ name: 'x', min: 0, max: 10 }],
      ([x]) => ({ objective: x, violation: x > 2 ? 1 : 0 }),
      { budget: 12 },
    );
    const firstInfeasible = result.ranked.findIndex((e) => e.score.violation > 0);
    expect(firstInfeasible).toBeGreaterThan(0);
    expect(result.ranked.slice(firstInfeasible).every((e) => e.score.violation > 0)).toBe(true);
    expect(result.best.point[0]).toBeLessThanOrEqual(2);
  });

  it('is deterministic: the same scores give the same search', async () => {
    const space = [
      { name: 'x', min: 0, max: 5 },
      { name: 'y', min: 0.01, max: 1, scale: 'log' as const },
    ];
    const fn: Fn = ([x, y]) => ({ objective: Math.sin(3 * x) + Math.log(y), violation: Math.max(0, x * y - 1) });
    const a = await search(space, fn);
    const b = await search(space, fn);
    expect(b.batches).toEqual(a.batches);
    expect(b.result).toEqual(a.result);
  });

  it('respects the budget, cutting the last round to the points nearest the best', async () => {
    const space = [
      { name: 'x', min: 0, max: 1 },
      { name: 'y', min: 0, max: 1 },
    ];
    for (const budget of [1, 7, 10, 33]) {
      const { result, all } = await search(
        space,
        ([x, y]) => ({ objective: -((x - 0.3) ** 2) - (y - 0.6) ** 2, violation: 0 }),
        { budget },
      );
      expect(all).toHaveLength(budget);
      expect(result.evaluations).toBe(budget);
      expect(result.stopped).toBe('budget');
    }
  });

  it('shrinks the coarse grid to fit the budget', async () => {
    expect(gridSizeFor(1, 5, 60)).toBe(5);
    expect(gridSizeFor(2, 5, 60)).toBe(5);
    expect(gridSizeFor(3, 5, 60)).toBe(3);
    expect(gridSizeFor(8, 5, 60)).toBe(2);
    // Odd counts only (a middle value to reuse), so 20 takes 3 × 3, not 4 × 4.
    expect(gridSizeFor(2, 5, 20)).toBe(3);
    expect(gridSizeFor(2, 4, 60)).toBe(3);
    const { batches } = await search(
      [
        { name: 'x', min: 0, max: 1 },
        { name: 'y', min: 0, max: 1 },
        { name: 'z', min: 0, max: 1 },
      ],
      () => ({ objective: 0, violation: 0 }),
    );
    expect(batches[0]).toHaveLength(27);
  });

  it('evaluates each round as one batch and never evaluates a point twice', async () => {
    const space = [
      { name: 'x', min: 0, max: 5 },
      { name: 'y', min: 0, max: 5 },
    ];
    const { result, batches, all } = await search(space, ([x, y]) => ({
      objective: -((x - 2) ** 2) - (y - 3) ** 2,
      violation: 0,
    }));
    expect(batches).toHaveLength(result.rounds.length);
    expect(batches[0]).toHaveLength(25);
    expect(new Set(all.map((p) => p.join(','))).size).toBe(all.length);
    // Refinement grids hold the best point and its old neighbours: reused, not re-run.
    expect(result.rounds.slice(1).every((r) => r.reused > 0)).toBe(true);
    expect(result.rounds[1].evaluated).toBe(16);
    // Each box is about half as wide as the last.
    const width = (r: { box: Array<[number, number]> }) => r.box[0][1] - r.box[0][0];
    expect(width(result.rounds[1])).toBeCloseTo(width(result.rounds[0]) / 2);
    expect(width(result.rounds[2])).toBeCloseTo(width(result.rounds[1]) / 2);
  });

  it('evaluates extra points (current values) in the first round, rounded', async () => {
    const { batches, result } = await search(
      [{ name: 'k', min: 1, max: 4 }],
      ([k]) => ({ objective: k === 2.12 ? 1 : 0, violation: 0 }),
      { extra: [[2.1234]] },
    );
    expect(batches[0]).toContainEqual([2.12]);
    expect(result.best.point).toEqual([2.12]);
  });

  it('breaks ties by tiebreak, then by nearness to the centre of the space', async () => {
    const flat = await search([{ name: 'x', min: 0, max: 10 }], () => ({ objective: 1, violation: 0 }), { budget: 5 });
    expect(flat.result.best.point).toEqual([5]);
    const tb = await search(
      [{ name: 'x', min: 0, max: 10 }],
      ([x]) => ({ objective: 1, violation: 0, tiebreak: Math.abs(x - 7.5) }),
      { budget: 5 },
    );
    expect(tb.result.best.point).toEqual([7.5]);
  });

  it('gives ties to the home point (the current values) when there is one', async () => {
    const { result } = await search([{ name: 'x', min: 0, max: 10 }], () => ({ objective: 1, violation: 0 }), {
      budget: 6,
      extra: [[8.2]],
      home: [8.2],
    });
    expect(result.best.point).toEqual([8.2]);
  });

  it('ranks a point with no objective below every point with one', async () => {
    const { result } = await search(
      [{ name: 'x', min: 0, max: 4 }],
      ([x]) => ({ objective: x === 4 ? null : -x, violation: 0 }),
      { budget: 5 },
    );
    expect(result.ranked.at(-1)!.point).toEqual([4]);
    expect(result.best.point).toEqual([0]);
  });

  it('refuses a space it cannot search', async () => {
    const never = async (): Promise<Score[]> => [];
    await expect(searchSpace([], never, { goal: 'maximize' })).rejects.toThrow(/at least one dimension/);
    await expect(
      searchSpace([{ name: 'r', min: 0, max: 1, scale: 'log' }], never, { goal: 'maximize' }),
    ).rejects.toThrow(/r: a log scale needs a range above 0/);
    await expect(searchSpace([{ name: 'r', min: 2, max: 1 }], never, { goal: 'maximize' })).rejects.toThrow(
      /r: expected min <= max/,
    );
    await expect(searchSpace([{ name: 'r', min: 0, max: 1 }], never, { goal: 'maximize', budget: 0 })).rejects.toThrow(
      /budget/,
    );
  });
});
