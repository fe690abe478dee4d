/**
 * A point run on several seeds is several simulations: the point's `--set`s, then the seed's.
 * They go to the runner as one flat batch (so every worker and machine shares the load),
 * point-major: point i's seed k is task `i × seeds + k`.
 */
export function withSeeds(points: readonly string[][], seeds: readonly number[]): string[][] {
  if (seeds.length <= 1) return points.map((p) => [...p, ...seeds.map((s) => `seed=${s}`)]);
  return points.flatMap((p) => seeds.map((s) => [...p, `seed=${s}`]));
}

/** The flat outcomes of `withSeeds` back per point: `[point][seed]`. */
export function bySeed<T>(outcomes: readonly T[], seeds: number): T[][] {
  if (outcomes.length % seeds !== 0)
    throw new RangeError(`bySeed: ${outcomes.length} outcomes for ${seeds} seeds each`);
  return Array.from({ length: outcomes.length / seeds }, (_, i) => outcomes.slice(i * seeds, (i + 1) * seeds));
}
