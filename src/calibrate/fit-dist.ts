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

/**
 * Children per call as a distribution: fixed when every call had the same number, else the
 * empirical one (`choice` over the values seen, weighted by how often). Counts of 0 are given
 * as 1, the least a scenario's fan-out makes; `zeros` says how many.
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
  return {
    dist: { dist: 'choice', values, weights: values.map((v) => round4(merged.get(v)! / total)) },
    how: `empirical over ${values.length} values`,
    zeros,
  };
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
