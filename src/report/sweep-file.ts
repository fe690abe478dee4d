/**
 * The versioned result of `stormlab sweep` (`stormlab.sweep/v1`): one point per combination of
 * the swept parameters, every point simulated with the same scenario and seed, so the table is
 * the same however many workers ran it.
 */
export const SWEEP_SCHEMA = 'stormlab.sweep/v1';

/** One swept parameter: a `--set` path and the values it takes, in the order given. */
export interface SweepParam {
  path: string;
  values: Array<number | string | boolean>;
}

/** The figures every point reports, whatever metric the sweep was asked to chart. */
export interface PointFigures {
  /** Upstream attempts ÷ logical leaf calls. */
  amplification: number;
  /** Root tasks ok within their deadline, per second. */
  goodput: number;
  /** Root tasks ok within their deadline ÷ offered. */
  successRate: number;
  /** Root tasks' p99 latency, ms from the intended start. */
  p99Ms: number;
  /** Upstream tokens spent on attempts whose caller had given up or failed. */
  wastedTokens: number;
  /** Calls shed locally, every layer and reason. */
  shed: number;
  /** As in the run result: null when goodput did not recover within the run. */
  recoveryMs: number | null;
}

export interface SweepPoint {
  /** The value of each parameter at this point, in the order of `params`. */
  values: Array<number | string | boolean>;
  figures: PointFigures;
  /** The value of the sweep's `metric` at this point (null when it has none, e.g. no recovery). */
  metric: number | null;
  /** On the Pareto front of goodput (higher), amplification (lower) and p99 (lower). */
  pareto: boolean;
}

export interface SweepFile {
  schema: typeof SWEEP_SCHEMA;
  scenario: string;
  /** The variant every point ran (`engine` when the scenario has one), or the scenario's own name. */
  variant: string;
  seed: number;
  params: SweepParam[];
  /** The metric charted in the heatmap, as named on the command line (`goodput`, `layers.llm.p99`). */
  metric: string;
  /** Whether higher values of `metric` are better (goodput) or lower (amplification, p99). */
  higherIsBetter: boolean;
  /** Row-major over `params`: the last parameter varies fastest. */
  points: SweepPoint[];
  timing: { wallMs: number; workers: number };
}
