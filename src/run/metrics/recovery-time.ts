/** Goodput counts as recovered at this share of its pre-fault average. */
export const RECOVERED_SHARE = 0.9;

/**
 * How long goodput took to come back after the last fault phase, in ms, from per-second bins.
 *
 *   baseline = mean(goodput[0 .. firstFault))            (the bins before the first fault)
 *   end      = lastFault + 1                              (the first bin after the last fault)
 *   recovery = (first b ≥ end with goodput[b] ≥ 0.9 · baseline) − end, in bins × binMs
 *
 * Returns 0 when there was no fault or goodput is already back in the first bin after it
 * (it never dropped, or dropped only during the fault), and null when it does not come back
 * before `bins` (the run's end) or there is no bin before the first fault to average.
 */
export function recoveryTime(
  goodput: ArrayLike<number>,
  faultActive: ArrayLike<number>,
  bins: number,
  binMs: number,
): number | null {
  let first = -1;
  let last = -1;
  for (let b = 0; b < Math.min(bins, faultActive.length); b++) {
    if (faultActive[b] > 0) {
      if (first < 0) first = b;
      last = b;
    }
  }
  if (first < 0) return 0;
  if (first === 0) return null;
  let sum = 0;
  for (let b = 0; b < first; b++) sum += goodput[b] ?? 0;
  const threshold = RECOVERED_SHARE * (sum / first);
  for (let b = last + 1; b < bins; b++) {
    if ((goodput[b] ?? 0) >= threshold) return (b - last - 1) * binMs;
  }
  return null;
}
