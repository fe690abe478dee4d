import type { Metric } from '../gate/metric.js';
import { refusedLine } from '../report/refused-line.js';
import {
  SWEEP_SCHEMA,
  type PointFigures,
  type SweepFile,
  type SweepPoint,
  type SweepRefusedPoint,
} from '../report/sweep-file.js';
import type { RunResult } from '../run/metrics/result.js';
import { round6 } from '../run/metrics/round.js';
import { paretoFront } from './pareto.js';
import { RefusedError } from './refused-error.js';
import { isRefused, type PointJob, type PointOutcome, type RefusedPoint, type RunPointsFn } from './run-points.js';
import { expandGrid, pointSets, type SweepParamSpec } from './sweep-params.js';

export interface SweepSpec {
  job: PointJob;
  /** For the file: the scenario's name, the variant run (or the scenario's name), its seed. */
  scenario: string;
  variant: string;
  seed: number;
  params: SweepParamSpec[];
  /** The metric charted, and its name as the user wrote it. */
  metric: Metric;
  metricText: string;
  workers: number;
  /** After each simulated point (for progress). */
  onDone?: (done: number, total: number) => void;
  /** Wall-clock ms, for `timing` only. */
  wallNow: () => number;
}

/** The figures every point reports, from its run's result, rounded as result JSON rounds them. */
export function figuresOf(run: RunResult): PointFigures {
  const shed = run.layers.reduce((n, l) => n + Object.values(l.shed).reduce((a, b) => a + (b ?? 0), 0), 0);
  return {
    amplification: round6(run.amplification),
    goodput: round6(run.goodput),
    successRate: round6(run.successRate),
    p99Ms: round6(run.roots.latencyMs.p99),
    wastedTokens: round6(run.upstream.wastedTokens),
    shed,
    recoveryMs: run.recoveryMs === null ? null : round6(run.recoveryMs),
  };
}

/**
 * Runs the grid (row-major, the last parameter fastest) through `runPoints`, every point with
 * the job's seed, and builds the sweep file: figures, the metric and the Pareto flag per point.
 * Cells whose values are refused together are listed as refused and the rest still run; when
 * every cell is refused there is nothing to show, and it throws a `RefusedError`.
 */
export async function runSweep(spec: SweepSpec, runPoints: RunPointsFn): Promise<SweepFile> {
  const start = spec.wallNow();
  const grid = expandGrid(spec.params);
  const sets = grid.map((g) => pointSets(spec.params, g));
  const outcomes = await runPoints(spec.job, sets, { workers: spec.workers, onDone: spec.onDone });
  if (grid.length > 0 && outcomes.every(isRefused)) {
    throw new RefusedError(
      refusedLine(grid.length, grid.length, {
        point: sets[0].join(' '),
        reason: (outcomes[0] as RefusedPoint).refused,
      }),
    );
  }
  return sweepFile(spec, grid, outcomes, {
    wallMs: spec.wallNow() - start,
    workers: Math.min(spec.workers, grid.length),
  });
}

/** The sweep file of a grid's outcomes (`outcomes[i]` is the run of `grid[i]`, or why it was refused). */
export function sweepFile(
  spec: Omit<SweepSpec, 'job' | 'wallNow' | 'workers'>,
  grid: number[][],
  outcomes: PointOutcome[],
  timing: SweepFile['timing'],
): SweepFile {
  const valuesAt = (g: number[]): SweepPoint['values'] => g.map((k, j) => spec.params[j].values[k]);
  const ran: Array<{ values: SweepPoint['values']; run: RunResult }> = [];
  const refused: SweepRefusedPoint[] = [];
  outcomes.forEach((o, i) =>
    isRefused(o)
      ? refused.push({ values: valuesAt(grid[i]), reason: o.refused })
      : ran.push({ values: valuesAt(grid[i]), run: o }),
  );
  const figures = ran.map((r) => figuresOf(r.run));
  const front = paretoFront(figures);
  return {
    schema: SWEEP_SCHEMA,
    scenario: spec.scenario,
    variant: spec.variant,
    seed: spec.seed,
    params: spec.params.map((p) => ({ path: p.path, values: p.values })),
    metric: spec.metricText,
    higherIsBetter: spec.metric.higherIsBetter,
    unit: spec.metric.unit,
    points: ran.map((r, i) => {
      const v = spec.metric.value(r.run);
      return { values: r.values, figures: figures[i], metric: v === null ? null : round6(v), pareto: front[i] };
    }),
    ...(refused.length > 0 ? { refused } : {}),
    timing,
  };
}

/**
 * Whether every point came out the same (figures and metric): the parameters changed nothing,
 * as when the variant run does not use what they set. A single point proves nothing.
 */
export function changedNothing(file: SweepFile): boolean {
  if (file.points.length < 2) return false;
  const key = (i: number): string => JSON.stringify([file.points[i].figures, file.points[i].metric]);
  const first = key(0);
  return file.points.every((_, i) => key(i) === first);
}
