import { fromUnit, snap, toUnit, type Dimension } from './dimension.js';
import { compareEvaluated, lexicographic, type Goal, type Score } from './search-rank.js';

export type { Dimension } from './dimension.js';
export type { Goal, Score } from './search-rank.js';

/** A point (one value per dimension, in their order) and what it scored. */
export interface Evaluated {
  point: number[];
  score: Score;
  /** The round it was first evaluated in (1 = the coarse grid). */
  round: number;
}

export interface SearchRound {
  round: number;
  /** The box searched, `[low, high]` per dimension in value terms. */
  box: Array<[number, number]>;
  /** Points simulated in this round (the box's grid less the points already known). */
  evaluated: number;
  /** Grid points of this round already evaluated in an earlier one. */
  reused: number;
  /** The best point of the whole search so far, after this round. */
  best: Evaluated;
}

export interface SearchOptions {
  goal: Goal;
  /** Evaluations at most (extra points count too). @default 60 */
  budget?: number;
  /** Grid values per dimension in a round; fewer when the budget cannot hold the coarse grid. @default 5 */
  gridSize?: number;
  /** Converged once every dimension's box is narrower than this share of its range. @default 0.01 */
  minWidth?: number;
  /** Significant digits every value is rounded to, so what is reported is what was evaluated. @default 3 */
  digits?: number;
  /** Points to evaluate in the first round besides the grid (a configuration's current values). */
  extra?: number[][];
  /**
   * Where ties go: among points that score the same, the one nearest this point wins (the
   * tuner passes the current values: no change without a reason). @default the centre
   */
  home?: number[];
  /** Called after each round. */
  onRound?: (round: SearchRound) => void;
}

export interface SearchResult {
  /** Every point evaluated, best first. */
  ranked: Evaluated[];
  best: Evaluated;
  /** Whether the best point meets every constraint (none does when it does not). */
  feasible: boolean;
  rounds: SearchRound[];
  evaluations: number;
  /** `budget`: every evaluation was spent; `converged`: the box became small first. */
  stopped: 'budget' | 'converged';
}

export type EvaluateBatch = (points: number[][]) => Promise<Score[]>;

export const SEARCH_DEFAULTS = { budget: 60, gridSize: 5, minWidth: 0.01, digits: 3 } as const;

/** A box in unit terms: `[low, high]` ⊆ [0, 1] per dimension, log dimensions in log terms. */
type Box = Array<[number, number]>;

/**
 * Finds the best point of `space` by a deterministic grid refinement: a coarse grid over the
 * whole space (`gridSize` values per dimension, log-spaced on log dimensions), then rounds
 * around the best point so far, each in a box half as wide as the last (so the new grid's
 * spacing halves and the old neighbours of the best point fall on it and are reused), until
 * the budget is spent or the box is narrower than `minWidth` of the range. Each round's new
 * points go to `evaluateBatch` together, so the caller can run them in parallel.
 *
 * Points meeting every constraint (violation 0) rank first, by objective; the others after
 * them, least violation first, so a search that finds nothing feasible still ends at the
 * least-bad region. Nothing here is random: the same scores give the same search.
 */
export async function searchSpace(
  space: readonly Dimension[],
  evaluateBatch: EvaluateBatch,
  opts: SearchOptions,
): Promise<SearchResult> {
  const o = { ...SEARCH_DEFAULTS, ...opts };
  checkSpace(space, o);
  const known = new Map<string, Evaluated>();
  const home = o.home === undefined ? undefined : space.map((d, i) => toUnit(d, o.home![i]));
  const rank = (): Evaluated[] => [...known.values()].sort((a, b) => compareEvaluated(a, b, o.goal, space, home));
  const rounds: SearchRound[] = [];
  const n = gridSizeFor(space.length, o.gridSize, o.budget);
  let box: Box = space.map(() => [0, 1]);
  let anchor = space.map(() => 0.5);
  let extra = (o.extra ?? []).map((p) => snapPoint(space, p, o.digits));
  for (;;) {
    const grid = gridPoints(space, box, n, o.digits);
    const reused = grid.filter((p) => known.has(keyOf(p))).length;
    const fresh = dedupe([...extra, ...grid]).filter((p) => !known.has(keyOf(p)));
    const picked = nearestFirst(space, fresh, anchor).slice(0, o.budget - known.size);
    extra = [];
    if (picked.length > 0) {
      await evaluateInto(known, picked, evaluateBatch, rounds.length + 1);
      rounds.push({
        round: rounds.length + 1,
        box: boxValues(space, box),
        evaluated: picked.length,
        reused,
        best: rank()[0],
      });
      o.onRound?.(rounds.at(-1)!);
    }
    const best = rank()[0];
    anchor = space.map((d, i) => toUnit(d, best.point[i]));
    const next = shrink(space, box, anchor);
    // A box that no longer shrinks (integer dimensions at their floor) with nothing new in it is converged too.
    const stalled = picked.length === 0 && keyOf(next.flat()) === keyOf(box.flat());
    const stopped =
      known.size >= o.budget ? 'budget' : isSmall(space, box, anchor, o.minWidth) || stalled ? 'converged' : undefined;
    if (stopped !== undefined)
      return { ranked: rank(), best, feasible: best.score.violation === 0, rounds, evaluations: known.size, stopped };
    box = next;
  }
}

/** Evaluates one round's points as one batch and records their scores. */
async function evaluateInto(
  known: Map<string, Evaluated>,
  points: number[][],
  evaluateBatch: EvaluateBatch,
  round: number,
): Promise<void> {
  const scores = await evaluateBatch(points);
  if (scores.length !== points.length)
    throw new Error(`evaluateBatch returned ${scores.length} scores for ${points.length} points`);
  points.forEach((point, i) => known.set(keyOf(point), { point, score: scores[i], round }));
}

function checkSpace(space: readonly Dimension[], o: Required<Omit<SearchOptions, 'extra' | 'home' | 'onRound'>>): void {
  if (space.length === 0) throw new RangeError('searchSpace: expected at least one dimension');
  for (const d of space) {
    if (!(Number.isFinite(d.min) && Number.isFinite(d.max) && d.min <= d.max))
      throw new RangeError(`${d.name}: expected min <= max, got ${d.min}..${d.max}`);
    if (d.scale === 'log' && d.min <= 0)
      throw new RangeError(`${d.name}: a log scale needs a range above 0, got ${d.min}..${d.max}`);
  }
  if (!(Number.isInteger(o.budget) && o.budget >= 1))
    throw new RangeError(`budget: expected an integer >= 1, got ${o.budget}`);
  if (!(Number.isInteger(o.gridSize) && o.gridSize >= 2))
    throw new RangeError(`gridSize: expected an integer >= 2, got ${o.gridSize}`);
}

/**
 * Values per dimension of the coarse grid: `wanted`, or fewer so the whole grid fits the
 * budget (5 × 5 = 25 of 60 in two dimensions, 3 × 3 × 3 in three), never below 2. Odd
 * counts only above 2: an odd grid has a middle value, so the next round's grid, centred on
 * the best point, holds it and its old neighbours (reused, not simulated again). A grid still
 * too big is cut to the points nearest the centre.
 */
export function gridSizeFor(dims: number, wanted: number, budget: number): number {
  let n = wanted % 2 === 0 && wanted > 2 ? wanted - 1 : wanted;
  while (n > 2 && n ** dims > budget) n = n - 2 >= 3 ? n - 2 : 2;
  return n;
}

function snapPoint(space: readonly Dimension[], p: number[], digits: number): number[] {
  return space.map((d, i) => snap(d, p[i], digits));
}

/** `n` evenly spaced values per dimension inside the box (distinct after snapping), every combination. */
function gridPoints(space: readonly Dimension[], box: Box, n: number, digits: number): number[][] {
  const axes = space.map((d, i) => {
    const [lo, hi] = box[i];
    const values = Array.from({ length: n }, (_, k) => snap(d, fromUnit(d, lo + ((hi - lo) * k) / (n - 1)), digits));
    return [...new Set(values)];
  });
  return axes.reduce<number[][]>((acc, axis) => acc.flatMap((p) => axis.map((v) => [...p, v])), [[]]);
}

/** Candidates ordered by distance to the anchor (unit terms), then by value: a budget cut keeps the nearest. */
function nearestFirst(space: readonly Dimension[], points: number[][], anchor: number[]): number[][] {
  const dist = (p: number[]): number => space.reduce((s, d, i) => s + (toUnit(d, p[i]) - anchor[i]) ** 2, 0);
  return points
    .map((p) => ({ p, d: dist(p) }))
    .sort((a, b) => a.d - b.d || lexicographic(a.p, b.p))
    .map((x) => x.p);
}

function dedupe(points: number[][]): number[][] {
  const seen = new Set<string>();
  return points.filter((p) => !seen.has(keyOf(p)) && seen.add(keyOf(p)) !== undefined);
}

function keyOf(p: readonly number[]): string {
  return p.join(',');
}

/**
 * The next box: half as wide, centred on the best point and slid back inside [0, 1]. An
 * integer dimension keeps at least its best value's neighbours, since halving a step of 1
 * would leave nothing new to try.
 */
function shrink(space: readonly Dimension[], box: Box, best: number[]): Box {
  return space.map((d, i) => {
    let half = (box[i][1] - box[i][0]) / 4;
    if (d.integer) half = Math.max(half, integerStep(d, best[i]));
    const width = Math.min(1, 2 * half);
    const lo = Math.min(Math.max(0, best[i] - half), 1 - width);
    return [lo, lo + width];
  });
}

/** The unit-terms distance from `u` to the farther of the neighbouring whole values. */
function integerStep(d: Dimension, u: number): number {
  const v = fromUnit(d, u);
  const up = Math.abs(toUnit(d, Math.min(d.max, v + 1)) - u);
  const down = Math.abs(u - toUnit(d, Math.max(d.min, v - 1)));
  return Math.max(up, down);
}

/**
 * Small: every continuous dimension narrower than `minWidth` of its range, every integer one
 * down to the best value and its neighbours.
 */
function isSmall(space: readonly Dimension[], box: Box, best: number[], minWidth: number): boolean {
  return space.every((d, i) => {
    const width = box[i][1] - box[i][0];
    return d.integer ? width <= 2 * integerStep(d, best[i]) + 1e-12 : width < minWidth;
  });
}

function boxValues(space: readonly Dimension[], box: Box): Array<[number, number]> {
  return space.map((d, i) => [fromUnit(d, box[i][0]), fromUnit(d, box[i][1])]);
}
