import type { Metric } from '../gate/metric.js';
import { refusedLine } from '../report/refused-line.js';
import {
  SWEEP_SCHEMA,
  type PointFigures,
  type Spread,
  type SweepFile,
  type SweepPoint,
  type SweepRefusedPoint,
} from '../report/sweep-file.js';
import type { EffectiveScenario, RunResult } from '../run/metrics/result.js';
import { round6 } from '../run/metrics/round.js';
import { paretoFront } from './pareto.js';
import { bySeed, withSeeds } from './seeded-points.js';
import { meanInterval } from './seed-stats.js';
import { RefusedError } from './refused-error.js';
import {
  isRefused,
  type PointJob,
  type PointOutcome,
  type RefusedPoint,
  type RunPointsFn,
  type WorkerChoice,
  type WorkerCount,
} from './run-points.js';
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
  workers: WorkerCount;
  /** The seeds every point runs on, when more than the scenario's one (see `seedList`). */
  seeds?: number[];
  /** What every point runs before its own values, for the file (see `SweepFile.effective`). */
  effective?: EffectiveScenario;
  /** After each simulated point (for progress). */
  onDone?: (done: number, total: number) => void;
  /** Once the workers are chosen (`auto` says what it chose). */
  onWorkers?: (choice: WorkerChoice) => void;
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
  let used = typeof spec.workers === 'number' ? Math.min(spec.workers, grid.length) : 1;
  const onWorkers = (c: WorkerChoice): void => {
    used = c.used;
    spec.onWorkers?.(c);
  };
  const seeds = spec.seeds ?? [];
  const tasks = withSeeds(sets, seeds);
  const outcomes = bySeed(
    await runPoints(spec.job, tasks, { workers: spec.workers, onDone: spec.onDone, onWorkers }),
    Math.max(1, seeds.length),
  ).map(seededOutcome);
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
    workers: used,
  });
}

/** What a point is over its seeds: its runs (one a seed), or why it was refused (values refused on one seed are refused on all). */
type SeededOutcome = PointOutcome | { runs: RunResult[] };

function seededOutcome(runs: PointOutcome[]): SeededOutcome {
  const refused = runs.find(isRefused);
  if (refused !== undefined) return refused;
  return runs.length === 1 ? runs[0] : { runs: runs as RunResult[] };
}

function runsOf(o: RunResult | { runs: RunResult[] }): RunResult[] {
  return 'runs' in o ? o.runs : [o];
}

/** Means of the figures over seeds, rounded as one run's are; recovery only when every seed recovered. */
function meanFigures(all: PointFigures[]): PointFigures {
  if (all.length === 1) return all[0];
  const mean = (get: (f: PointFigures) => number): number => round6(meanInterval(all.map(get)).mean);
  const recovered = all.every((f) => f.recoveryMs !== null);
  return {
    amplification: mean((f) => f.amplification),
    goodput: mean((f) => f.goodput),
    successRate: mean((f) => f.successRate),
    p99Ms: mean((f) => f.p99Ms),
    wastedTokens: mean((f) => f.wastedTokens),
    shed: mean((f) => f.shed),
    recoveryMs: recovered ? mean((f) => f.recoveryMs as number) : null,
  };
}

function spreadOf(values: number[]): Spread {
  const i = meanInterval(values);
  return { low: round6(i.low), high: round6(i.high) };
}

/** The sweep file of a grid's outcomes (`outcomes[i]` is the run of `grid[i]`, or why it was refused). */
export function sweepFile(
  spec: Omit<SweepSpec, 'job' | 'wallNow' | 'workers'>,
  grid: number[][],
  outcomes: SeededOutcome[],
  timing: SweepFile['timing'],
): SweepFile {
  const valuesAt = (g: number[]): SweepPoint['values'] => g.map((k, j) => spec.params[j].values[k]);
  const ran: Array<{ values: SweepPoint['values']; runs: RunResult[] }> = [];
  const refused: SweepRefusedPoint[] = [];
  outcomes.forEach((o, i) =>
    isRefused(o)
      ? refused.push({ values: valuesAt(grid[i]), reason: o.refused })
      : ran.push({ values: valuesAt(grid[i]), runs: runsOf(o) }),
  );
  const perSeed = ran.map((r) => r.runs.map(figuresOf));
  const figures = perSeed.map(meanFigures);
  const front = paretoFront(figures);
  const seeded = (spec.seeds?.length ?? 0) > 1;
  return {
    schema: SWEEP_SCHEMA,
    scenario: spec.scenario,
    variant: spec.variant,
    seed: spec.seed,
    ...(seeded ? { seeds: spec.seeds } : {}),
    params: spec.params.map((p) => ({ path: p.path, values: p.values })),
    metric: spec.metricText,
    higherIsBetter: spec.metric.higherIsBetter,
    unit: spec.metric.unit,
    points: ran.map((r, i) => {
      const vs = r.runs.map((run) => spec.metric.value(run));
      const known = vs.every((v): v is number => v !== null);
      const metric = known ? round6(meanInterval(vs).mean) : null;
      const point: SweepPoint = { values: r.values, figures: figures[i], metric, pareto: front[i] };
      if (seeded) {
        const f = perSeed[i];
        point.spread = {
          metric: known ? spreadOf(vs) : null,
          goodput: spreadOf(f.map((x) => x.goodput)),
          amplification: spreadOf(f.map((x) => x.amplification)),
          p99Ms: spreadOf(f.map((x) => x.p99Ms)),
        };
      }
      return point;
    }),
    ...(refused.length > 0 ? { refused } : {}),
    ...(spec.effective === undefined ? {} : { effective: spec.effective }),
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
