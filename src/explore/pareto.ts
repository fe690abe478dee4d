import type { PointFigures } from '../report/sweep-file.js';

/**
 * Whether `a` dominates `b`: no worse on goodput (higher is better), amplification and root
 * p99 (lower is better), and better on at least one.
 */
export function dominates(a: PointFigures, b: PointFigures): boolean {
  const noWorse = a.goodput >= b.goodput && a.amplification <= b.amplification && a.p99Ms <= b.p99Ms;
  return noWorse && (a.goodput > b.goodput || a.amplification < b.amplification || a.p99Ms < b.p99Ms);
}

/**
 * Per point, whether it is on the Pareto front: no other point dominates it. Equal points
 * do not dominate each other, so they are on or off the front together. O(n²): a sweep has
 * at most a few thousand points, and each comparison is three number tests.
 */
export function paretoFront(points: readonly PointFigures[]): boolean[] {
  return points.map((p) => !points.some((q) => q !== p && dominates(q, p)));
}
