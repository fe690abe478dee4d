import { toUnit, type Dimension } from './dimension.js';
import type { Evaluated } from './search-space.js';

export type Goal = 'maximize' | 'minimize';

/** What one evaluated point scored. */
export interface Score {
  /** The figure optimised; `null` when the point has none (it ranks below every number). */
  objective: number | null;
  /**
   * How far the point is from meeting every constraint; 0 exactly when it meets them all.
   * Infinity for a point that could not be run (the tuner's refused points): below all others.
   */
  violation: number;
  /** Breaks ties of the objective, lower first (the tuner passes amplification). */
  tiebreak?: number;
}

/**
 * The search's order, best first: points meeting every constraint (violation 0) before the
 * others; among those, the better objective; among the others, the smaller violation, then
 * the better objective. Ties go to the lower `tiebreak`, then to the point nearer `home` (unit
 * terms; the centre of the space unless given: the safer choice when figures are equal), then
 * to the smaller values.
 */
export function compareEvaluated(
  a: Evaluated,
  b: Evaluated,
  goal: Goal,
  space: readonly Dimension[],
  home?: readonly number[],
): number {
  const sa = a.score;
  const sb = b.score;
  const fa = sa.violation === 0;
  const fb = sb.violation === 0;
  if (fa !== fb) return fa ? -1 : 1;
  if (!fa && sa.violation !== sb.violation) return sa.violation - sb.violation;
  return (
    compareObjective(sa.objective, sb.objective, goal) ||
    (sa.tiebreak ?? 0) - (sb.tiebreak ?? 0) ||
    distance(a.point, space, home) - distance(b.point, space, home) ||
    lexicographic(a.point, b.point)
  );
}

function compareObjective(a: number | null, b: number | null, goal: Goal): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return goal === 'maximize' ? b - a : a - b;
}

function distance(point: readonly number[], space: readonly Dimension[], home: readonly number[] | undefined): number {
  return space.reduce((s, d, i) => s + (toUnit(d, point[i]) - (home?.[i] ?? 0.5)) ** 2, 0);
}

export function lexicographic(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}
