import type { Random } from '../engine/random.js';

/**
 * A distribution of numbers (milliseconds, tokens, fan-outs), as scenarios write them.
 * A plain number is a constant.
 */
export type Dist =
  | number
  | { dist: 'const'; value: number }
  | { dist: 'uniform'; min: number; max: number }
  | { dist: 'exponential'; mean: number }
  /** Log-normal by its median and its 99th percentile: the shape of LLM latencies and token counts. */
  | { dist: 'lognormal'; median: number; p99: number }
  | { dist: 'choice'; values: number[]; weights?: number[] }
  /** Whole numbers 0, 1, 2, … around `mean` (counts only: fan-outs, whose draws of 0 are 1, and tokens). */
  | { dist: 'poisson'; mean: number };

/** Above this mean a Poisson draw is the normal approximation, rounded (Knuth's product needs ~mean uniforms). */
const POISSON_NORMAL_ABOVE = 30;

/** Turns a `Dist` into a sampler drawing from `random`. Samplers allocate nothing per draw. */
export function sampler(d: Dist, random: Random): () => number {
  if (typeof d === 'number') return () => d;
  switch (d.dist) {
    case 'const':
      return () => d.value;
    case 'uniform': {
      const span = d.max - d.min;
      return () => d.min + random.next() * span;
    }
    case 'exponential':
      return () => -Math.log(1 - random.next()) * d.mean;
    case 'lognormal': {
      // ln X ~ N(mu, sigma): median = e^mu, p99 = e^(mu + 2.3263 sigma).
      const mu = Math.log(d.median);
      const sigma = d.p99 > d.median ? Math.log(d.p99 / d.median) / 2.326347874 : 0;
      return () => Math.exp(mu + sigma * normal(random));
    }
    case 'poisson': {
      const m = d.mean;
      if (m > POISSON_NORMAL_ABOVE) {
        const sd = Math.sqrt(m);
        return () => Math.max(0, Math.round(m + sd * normal(random)));
      }
      const limit = Math.exp(-m);
      return () => {
        let k = 0;
        let p = random.next();
        while (p > limit) {
          k++;
          p *= random.next();
        }
        return k;
      };
    }
    case 'choice': {
      const w = d.weights ?? d.values.map(() => 1);
      const total = w.reduce((a, b) => a + b, 0);
      const cum = Float64Array.from(
        w,
        (
          (s) => (x: number) =>
            (s += x / total)
        )(0),
      );
      return () => {
        const u = random.next();
        for (let i = 0; i < cum.length - 1; i++) if (u < cum[i]) return d.values[i];
        return d.values[d.values.length - 1];
      };
    }
  }
}

/** A standard normal draw (Box–Muller, one of the pair). */
function normal(random: Random): number {
  const u = 1 - random.next();
  const v = random.next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** The mean of a `Dist` (a log-normal's from its median and p99), for estimates made before a run. */
export function meanOf(d: Dist): number {
  if (typeof d === 'number') return d;
  switch (d.dist) {
    case 'const':
      return d.value;
    case 'uniform':
      return (d.min + d.max) / 2;
    case 'exponential':
      return d.mean;
    case 'lognormal': {
      const sigma = d.p99 > d.median ? Math.log(d.p99 / d.median) / 2.326347874 : 0;
      return d.median * Math.exp((sigma * sigma) / 2);
    }
    case 'poisson':
      return d.mean;
    case 'choice': {
      const w = d.weights ?? d.values.map(() => 1);
      const total = w.reduce((a, b) => a + b, 0);
      return d.values.reduce((sum, v, i) => sum + (v * w[i]) / total, 0);
    }
  }
}
