import type { Dist } from '../upstream/distribution.js';
import { type Reservoir, quantileOf } from './reservoir.js';

/** z of the 95th and 99th percentiles of a standard normal. */
const Z95 = 1.6448536;
const Z99 = 2.3263479;
/** Below this many samples a 99th percentile is read off the 95th (a log-normal's tail). */
const TAIL_SAMPLES = 200;

export interface Fit {
  dist: Dist;
  /** How it was fitted, for the report (`fixed`, `empirical over 5 values`, `log-normal`). */
  how: string;
}

/** A Poisson fan-out is fitted only from this many calls up (fewer cannot tell it from another shape). */
const POISSON_MIN_CALLS = 30;
/** …and kept when a χ² test does not reject it at this level. */
const POISSON_ALPHA = 0.05;
/** χ² bins are merged until each expects at least this many calls. */
const MIN_EXPECTED = 5;

/**
 * Children per call as a distribution, the first that fits of: fixed (every call had the same
 * number); Poisson (a χ² goodness-of-fit test at 5 % does not reject the fan-out a
 * `{dist: poisson}` makes, its draws of 0 being 1 as calls that started none are here, over
 * at least 30 calls: `poissonTest`);
 * else the empirical one (`choice` over the values seen, weighted by how often). Counts of 0
 * are given as 1, the least a scenario's fan-out makes; `zeros` says how many. `how` says which
 * fitted and, for a count that had a test, its p-value.
 */
export function fitCount(counts: Map<number, number>): Fit & { zeros: number } {
  const merged = new Map<number, number>();
  let zeros = 0;
  for (const [v, n] of counts) {
    if (v === 0) zeros += n;
    const k = Math.max(1, v);
    merged.set(k, (merged.get(k) ?? 0) + n);
  }
  const values = [...merged.keys()].sort((a, b) => a - b);
  if (values.length === 0) return { dist: 1, how: 'none seen', zeros };
  if (values.length === 1) return { dist: values[0], how: 'fixed', zeros };
  const total = values.reduce((s, v) => s + merged.get(v)!, 0);
  const test = poissonTest(merged);
  if (test !== undefined && test.p >= POISSON_ALPHA)
    return {
      dist: { dist: 'poisson', mean: round(test.mean) },
      how: `Poisson (mean ${round(test.mean)}, a draw of 0 is 1: ${round(meanCount(merged))} per call; χ² p = ${test.p.toFixed(2)} over ${total} calls)`,
      zeros,
    };
  return {
    dist: { dist: 'choice', values, weights: values.map((v) => round4(merged.get(v)! / total)) },
    how: `empirical over ${values.length} values (${test === undefined ? `too few calls or values to test for Poisson` : `not Poisson: χ² p = ${test.p < 0.001 ? '< 0.001' : test.p.toFixed(3)}`})`,
    zeros,
  };
}

/**
 * The χ² goodness-of-fit of the fan-out a scenario's `{dist: poisson, mean: λ}` makes — a
 * Poisson whose draws of 0 are 1 — to counts of at least 1 (`counts` with 0s taken as 1s): λ
 * from the observed mean (λ + e^−λ), bins of 1, 2, … (the last holding the tail) merged until
 * each expects at least `MIN_EXPECTED` calls, one degree of freedom spent on λ. Undefined when
 * there are too few calls or bins to test.
 */
export function poissonTest(counts: ReadonlyMap<number, number>): { mean: number; p: number } | undefined {
  let n = 0;
  let sum = 0;
  let max = 1;
  for (const [k0, c] of counts) {
    const k = Math.max(1, k0);
    n += c;
    sum += k * c;
    if (k > max) max = k;
  }
  if (n < POISSON_MIN_CALLS) return undefined;
  const observedMean = sum / n;
  if (observedMean <= 1.001) return undefined;
  // E[max(1, X)] = λ + e^−λ for X ~ Poisson(λ): solve for λ (Newton; the function is convex, increasing).
  let lambda = observedMean;
  for (let i = 0; i < 50; i++) {
    const step = (lambda + Math.exp(-lambda) - observedMean) / (1 - Math.exp(-lambda));
    lambda -= step;
    if (Math.abs(step) < 1e-12) break;
  }
  const at = (k: number) => counts.get(k) ?? 0;
  const bins: Array<{ observed: number; expected: number }> = [];
  let pmf = Math.exp(-lambda) * lambda; // P(X = 1)
  let cdf = Math.exp(-lambda) + pmf;
  let cur = { observed: at(0) + at(1), expected: n * cdf };
  for (let k = 2; k <= max + 1; k++) {
    if (cur.expected >= MIN_EXPECTED && n * (1 - cdf) >= MIN_EXPECTED) {
      bins.push(cur);
      cur = { observed: 0, expected: 0 };
    }
    if (k > max) break;
    pmf *= lambda / k;
    cdf += pmf;
    cur.observed += at(k);
    cur.expected += n * pmf;
  }
  // The tail past the largest count seen belongs to the last bin.
  cur.expected += n * Math.max(0, 1 - cdf);
  if (bins.length > 0 && cur.expected < MIN_EXPECTED) {
    bins[bins.length - 1].observed += cur.observed;
    bins[bins.length - 1].expected += cur.expected;
  } else bins.push(cur);
  const df = bins.length - 2;
  if (df < 1) return undefined;
  let chi2 = 0;
  for (const b of bins) chi2 += (b.observed - b.expected) ** 2 / b.expected;
  return { mean: lambda, p: chiSquareSurvival(df, chi2) };
}

/** P(X ≥ x) for X χ²-distributed with `df` degrees of freedom. */
export function chiSquareSurvival(df: number, x: number): number {
  return gammaQ(df / 2, x / 2);
}

/** The regularized upper incomplete gamma Q(a, x): the χ² survival function is Q(df / 2, χ² / 2). */
function gammaQ(a: number, x: number): number {
  if (x <= 0) return 1;
  const lnPre = -x + a * Math.log(x) - lnGamma(a);
  if (x < a + 1) {
    // The series for P(a, x).
    let term = 1 / a;
    let sum = term;
    for (let k = 1; k < 500 && Math.abs(term) > 1e-14 * Math.abs(sum); k++) {
      term *= x / (a + k);
      sum += term;
    }
    return Math.max(0, 1 - sum * Math.exp(lnPre));
  }
  // Lentz's continued fraction for Q(a, x).
  const tiny = 1e-300;
  let b = x + 1 - a;
  let c = 1 / tiny;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 500; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-14) break;
  }
  return Math.min(1, Math.exp(lnPre) * h);
}

/** ln Γ(x), Lanczos (g = 7, 9 terms): ~15 digits for x > 0. */
function lnGamma(x: number): number {
  const g = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
  const y = x - 1;
  let a = g[0];
  const t = y + 7.5;
  for (let i = 1; i < 9; i++) a += g[i] / (y + i);
  return 0.5 * Math.log(2 * Math.PI) + (y + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Mean of a count distribution as observed. */
export function meanCount(counts: Map<number, number>): number {
  let s = 0;
  let n = 0;
  for (const [v, c] of counts) {
    s += v * c;
    n += c;
  }
  return n === 0 ? 0 : s / n;
}

/**
 * A log-normal by its median and 99th percentile (fixed when every sample is the same), in
 * `unit` steps (1 ms or 1 token). With fewer than 200 samples the 99th percentile is the
 * log-normal's through the observed 95th.
 */
export function fitLognormal(r: Reservoir, floor = 1): Fit {
  const v = r.values().sort();
  if (v.length === 0) return { dist: floor, how: 'no samples' };
  const median = Math.max(floor, quantileOf(v, 0.5));
  const lo = v[0];
  const hi = v[v.length - 1];
  if (hi - lo < 1e-9 * Math.max(1, hi)) return { dist: round(Math.max(floor, hi)), how: 'fixed' };
  let p99: number;
  if (v.length >= TAIL_SAMPLES) p99 = quantileOf(v, 0.99);
  else {
    const p95 = quantileOf(v, 0.95);
    const sigma = p95 > median ? Math.log(p95 / median) / Z95 : 0;
    p99 = median * Math.exp(sigma * Z99);
  }
  p99 = Math.max(p99, median);
  if (p99 <= median) return { dist: round(median), how: 'fixed at the median' };
  return { dist: { dist: 'lognormal', median: round(median), p99: round(p99) }, how: 'log-normal' };
}

/** Token counts with at most this many distinct values are fitted as they are (`choice`), not as a log-normal. */
const FEW_VALUES = 12;

/**
 * Token counts per call: the values as observed (`choice`, weighted) when there are few of
 * them — a program whose answers take a handful of lengths (a tool call, then a short answer)
 * is no log-normal, whose median and p99 would miss its mean — else a log-normal.
 */
export function fitTokens(r: Reservoir): Fit {
  const counts = new Map<number, number>();
  for (const v of r.values()) {
    const k = Math.max(1, Math.round(v));
    counts.set(k, (counts.get(k) ?? 0) + 1);
    if (counts.size > FEW_VALUES) return fitLognormal(r);
  }
  const values = [...counts.keys()].sort((a, b) => a - b);
  if (values.length === 0) return { dist: 1, how: 'no samples' };
  if (values.length === 1) return { dist: values[0], how: 'fixed' };
  const total = r.size;
  return {
    dist: { dist: 'choice', values, weights: values.map((v) => round4(counts.get(v)! / total)) },
    how: `empirical over ${values.length} values`,
  };
}

export function round(x: number): number {
  if (Math.abs(x) >= 100) return Math.round(x);
  if (Math.abs(x) >= 1) return Math.round(x * 10) / 10;
  return Math.round(x * 1000) / 1000;
}

function round4(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}
