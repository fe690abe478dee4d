/** One refused point: its values as `--set` texts (`engine.breaker.openMs=60s engine.breaker.maxOpenMs=30s`) and why. */
export interface RefusedExample {
  point: string;
  reason: string;
}

/**
 * The one line a sweep or a tune says about the points it skipped because the scenario or the
 * engine refuses their values together, with the first as an example:
 * `3 of 61 points skipped because their values are refused, e.g. engine.breaker.openMs=60s
 * engine.breaker.maxOpenMs=30s: engine: breaker.maxOpenMs must be a number >= 60000, got 30000`.
 * When every point is refused it says so (then the command exits 2 with this line).
 */
export function refusedLine(skipped: number, total: number, example: RefusedExample): string {
  const eg = `e.g. ${example.point || 'no --set'}: ${example.reason}`;
  if (skipped >= total)
    return total === 1
      ? `the only point is refused: ${example.reason}`
      : `every one of the ${total} points is refused, ${eg}`;
  return `${skipped} of ${total} points skipped because their values are refused, ${eg}`;
}
