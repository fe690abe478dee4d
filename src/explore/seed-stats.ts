/**
 * Means and confidence intervals over seeds. A point run on N seeds is N draws of the same
 * random process; with few of them the interval comes from Student's t distribution, not the
 * normal one (with 5 seeds the 95 % interval is 2.78 standard errors wide each side, not 1.96).
 */

/** A mean and its two-sided confidence interval. */
export interface Interval {
  mean: number;
  low: number;
  high: number;
  /** Draws behind it. */
  n: number;
}

/** t quantiles for a two-sided 95 % interval, by degrees of freedom 1..30 (standard tables). */
const T95 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11,
  2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];

/** The t quantile of a two-sided 95 % interval with `df` degrees of freedom (the normal 1.96 past 120). */
export function t95(df: number): number {
  if (!(Number.isInteger(df) && df >= 1)) throw new RangeError(`t95: expected degrees of freedom >= 1, got ${df}`);
  if (df <= 30) return T95[df - 1];
  // Between the table and the normal: 40 → 2.021, 60 → 2.000, 120 → 1.980.
  if (df <= 40) return 2.042 + ((2.021 - 2.042) * (df - 30)) / 10;
  if (df <= 60) return 2.021 + ((2.0 - 2.021) * (df - 40)) / 20;
  if (df <= 120) return 2.0 + ((1.98 - 2.0) * (df - 60)) / 60;
  return 1.96;
}

/** The mean of `xs` and its 95 % interval (a single draw: the interval is the point itself). */
export function meanInterval(xs: readonly number[]): Interval {
  const n = xs.length;
  if (n === 0) throw new RangeError('meanInterval: expected at least one value');
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  if (n === 1) return { mean, low: mean, high: mean, n };
  const variance = xs.reduce((s, x) => s + (x - mean) ** 2, 0) / (n - 1);
  const half = t95(n - 1) * Math.sqrt(variance / n);
  return { mean, low: mean - half, high: mean + half, n };
}

/**
 * A paired comparison: `a[i]` and `b[i]` ran on the same seed, so the seed's own luck cancels
 * in `a[i] − b[i]` and the interval of the mean difference is far narrower than the two
 * intervals side by side would suggest.
 */
export function pairedDifference(a: readonly number[], b: readonly number[]): Interval {
  if (a.length !== b.length) throw new RangeError(`pairedDifference: ${a.length} values against ${b.length}`);
  return meanInterval(a.map((x, i) => x - b[i]));
}

/** The seeds of a point run `n` times: the scenario's seed, then the next ones (32-bit, wrapping). */
export function seedList(base: number, n: number): number[] {
  return Array.from({ length: n }, (_, k) => (base + k) % 2 ** 32);
}
