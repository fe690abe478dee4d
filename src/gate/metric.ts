import type { FigureUnit } from '../report/format.js';
import type { RunResult } from '../run/metrics/result.js';

/**
 * How a metric's figures read, and so which thresholds make sense for it: `times` takes `1.5`
 * or `1.5x`, `share` takes `0.95` or `95%`, `ms` needs a unit (`20s`, `500ms`), `rate` is per
 * second, `count` and `tokens` take `12k` or `1.5M`.
 */
export type MetricUnit = FigureUnit;

export interface Metric {
  /** The canonical path into one variant's result: `layers.llm.latencyMs.p99`. */
  name: string;
  unit: MetricUnit;
  /** Whether more is better (goodput, success rate) or worse (amplification, latency, waste, shed). */
  higherIsBetter: boolean;
  /**
   * The figure in a run's result. `null` when the run has none: no recovery within the run
   * (`recoveryMs`), or a live-only figure of a simulated run.
   */
  value(run: RunResult): number | null;
}
