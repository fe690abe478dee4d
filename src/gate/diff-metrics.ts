import type { RunResult } from '../run/metrics/result.js';
import { formatCount, formatMs, formatPercent, formatRate, formatTimes } from '../report/format.js';

/**
 * One figure `stormlab diff` compares between two runs of a variant. `family` is the name a
 * `--tolerance family=x` sets for every metric of it (`p99` covers the roots' and each layer's).
 */
export interface DiffMetric {
  /** The check's name: `amplification`, `roots.p99`, `layers.llm.p99`. */
  name: string;
  family: DiffFamily;
  higherIsBetter: boolean;
  /** Formats a figure of it for people: `1.07×`, `373 ms`. */
  format(x: number): string;
  /**
   * The figure in a run: `null` when the run has none, `undefined` when the run does not have
   * the thing it is about (a layer the other run has and this one lacks).
   */
  value(run: RunResult): number | null | undefined;
  /** `null` means "never" (no recovery within the run): worse than any figure, not a missing one. */
  nullIsNever?: boolean;
}

export const DIFF_FAMILIES = [
  'amplification',
  'goodput',
  'successRate',
  'p99',
  'wastedTokens',
  'recovery',
  'duplicates',
  'degraded',
  'partial',
] as const;
export type DiffFamily = (typeof DIFF_FAMILIES)[number];

/**
 * The least change that counts as a regression (or an improvement), whatever the tolerance:
 * a change is judged against max(tolerance × |base|, floor). Without it a base of 0 would
 * make any change at all "infinitely" worse — 0 → 50 wasted tokens is noise, 0 → 5,000 is not.
 * Each floor is about one unit of the figure's own resolution.
 */
export const DIFF_FLOORS: Record<DiffFamily, number> = {
  /** 0.01×: one extra upstream attempt per hundred leaf calls. */
  amplification: 0.01,
  /** 0.05 root tasks/s: one root task less in a 20-second run. */
  goodput: 0.05,
  /** Half a percentage point: one root task in 200. */
  successRate: 0.005,
  /** 10 ms: latencies are whole milliseconds, and a few of them are jitter. */
  p99: 10,
  /** 1,000 tokens: about one LLM call's worth. */
  wastedTokens: 1000,
  /** 1 s: recovery is measured on per-second bins. */
  recovery: 1000,
  /** 1: one email sent twice is a regression (from 0, any is). */
  duplicates: 1,
  /** Half a percentage point of root tasks: one in 200 finished with a degraded tool call. */
  degraded: 0.005,
  /** Half a percentage point of root tasks: one in 200 returned a partial result. */
  partial: 0.005,
};

/** Root tasks that finished: ok, late, failed or partial. */
function finishedRoots(r: RunResult): number {
  return r.roots.ok + r.roots.late + r.roots.failed + (r.roots.partial ?? 0);
}

/** `field` of the roots ÷ finished roots; undefined when the run does not count it (no tools, no stages). */
function rootShare(field: 'degraded' | 'partial'): DiffMetric['value'] {
  return (r) => {
    const n = r.roots[field];
    if (n === undefined) return undefined;
    const finished = finishedRoots(r);
    return finished > 0 ? n / finished : 0;
  };
}

/** Which root shares a diff compares: those either run counts (degraded with tools, partial with stage budgets). */
export interface RootShares {
  degraded?: boolean;
  partial?: boolean;
}

const never = (x: number): string => (x === Infinity ? 'never' : formatMs(x));

function runMetric(
  name: DiffFamily,
  higherIsBetter: boolean,
  format: (x: number) => string,
  value: DiffMetric['value'],
): DiffMetric {
  return { name, family: name, higherIsBetter, format, value };
}

/**
 * The run-wide metrics, then the roots' p99 and each named layer's p99, then each named tool's
 * duplicates, then the degraded and partial shares of root tasks where `shares` asks for them.
 */
export function diffMetrics(
  layers: readonly string[],
  tools: readonly string[] = [],
  shares: RootShares = {},
): DiffMetric[] {
  return [
    runMetric('amplification', false, formatTimes, (r) => r.amplification),
    runMetric('goodput', true, formatRate, (r) => r.goodput),
    runMetric('successRate', true, formatPercent, (r) => r.successRate),
    { name: 'roots.p99', family: 'p99', higherIsBetter: false, format: formatMs, value: (r) => r.roots.latencyMs.p99 },
    ...layers.map(
      (layer): DiffMetric => ({
        name: `layers.${layer}.p99`,
        family: 'p99',
        higherIsBetter: false,
        format: formatMs,
        value: (r) => r.layers.find((l) => l.name === layer)?.latencyMs.p99,
      }),
    ),
    runMetric('wastedTokens', false, formatCount, (r) => r.upstream.wastedTokens),
    // null is "did not recover within the run": never, worse than any time (see diff-results).
    { ...runMetric('recovery', false, never, (r) => r.recoveryMs), nullIsNever: true },
    ...tools.map(
      (tool): DiffMetric => ({
        name: `tools.${tool}.duplicates`,
        family: 'duplicates',
        higherIsBetter: false,
        format: formatCount,
        value: (r) => r.tools?.find((t) => t.name === tool)?.duplicates,
      }),
    ),
    ...(['degraded', 'partial'] as const)
      .filter((f) => shares[f])
      .map(
        (f): DiffMetric => ({
          name: `roots.${f} share`,
          family: f,
          higherIsBetter: false,
          format: formatPercent,
          value: rootShare(f),
        }),
      ),
  ];
}
