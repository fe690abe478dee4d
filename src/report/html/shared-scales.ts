import type { RunResult } from '../../run/metrics/result.js';
import { maxOf } from './chart-kit.js';
import { seriesEnd } from './time-axis.js';

/** What charts side by side share, so that variants compare at a glance. */
export interface SharedScales {
  /** Seconds: the end of the longest run's series. */
  end: number;
  /** Highest offered, leaf-call or upstream-attempt count per second. */
  load: number;
  /** Highest latency percentile, ms. */
  latencyMs: number;
}

export function sharedScales(vs: readonly RunResult[]): SharedScales {
  return {
    end: Math.max(...vs.map((v) => seriesEnd(v.series))),
    load: maxOf(...vs.flatMap((v) => [v.series.offered, v.series.leafCalls, v.series.upstreamAttempts])),
    latencyMs: maxOf(
      ...vs.flatMap((v) => [v.roots, ...v.layers].map((r) => [r.latencyMs.p50, r.latencyMs.p95, r.latencyMs.p99])),
    ),
  };
}
