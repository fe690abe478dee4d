import { SHED_REASONS } from '../engine/errors.js';
import { holds, parseExpectation, type Expectation } from '../gate/expectation.js';
import { GateError } from '../gate/gate-error.js';
import type { Metric } from '../gate/metric.js';
import type { MetricCatalog } from '../gate/metric-catalog.js';
import type { PointFigures } from '../report/sweep-file.js';
import type { TuneConstraintFigure } from '../report/tune-report.js';
import type { RunResult } from '../run/metrics/result.js';
import { round6 } from '../run/metrics/round.js';
import type { Goal, Score } from './search-rank.js';
import { TuneError } from './tune-error.js';

/** What the tuner optimises, and the constraints every answer must meet. */
export interface TuneGoal {
  direction: Goal;
  /** The objective as written (`goodput`). */
  objectiveText: string;
  objective: Metric;
  constraints: Expectation[];
}

export interface GoalFlags {
  maximize?: string;
  minimize?: string;
  subjectTo?: string[];
}

/** A violation stands for "no figure at all" (a constraint on a metric the run lacks) and caps the rest, so sums stay finite. */
export const WORST = 1e6;

/**
 * Reads `--maximize`/`--minimize` (exactly one) and each `--subject-to` with the gate's
 * metric names and syntax, checked before anything runs. A constraint may name the tuned
 * variant (`variants.engine.amplification <= 1.2`) but no other: only that one is simulated.
 */
export function parseGoal(
  flags: GoalFlags,
  catalog: MetricCatalog,
  variants: readonly string[],
  tuned: string,
): TuneGoal {
  if ((flags.maximize === undefined) === (flags.minimize === undefined)) {
    throw new TuneError(
      flags.maximize === undefined
        ? '--maximize or --minimize: give one metric to optimise, e.g. --maximize goodput'
        : '--maximize and --minimize: give only one of them',
    );
  }
  const direction: Goal = flags.maximize !== undefined ? 'maximize' : 'minimize';
  const flag = `--${direction}`;
  const objectiveText = (flags.maximize ?? flags.minimize)!.trim();
  const objective = gate(flag, () => catalog.resolve(objectiveText), objectiveText);
  const constraints = (flags.subjectTo ?? []).map((text) => {
    const where = `--subject-to ${JSON.stringify(text)}`;
    const e = gate(where, () => parseExpectation(text, catalog, variants));
    if (e.variant !== undefined && e.variant !== tuned)
      throw new TuneError(
        `${where}: tune simulates variant ${tuned} only; write the constraint without variants.${e.variant}.`,
      );
    return e;
  });
  return { direction, objectiveText, objective, constraints };
}

function gate<T>(where: string, fn: () => T, text?: string): T {
  try {
    if (text === '') throw new GateError('expected a metric name, e.g. goodput');
    return fn();
  } catch (e) {
    if (e instanceof GateError) throw new TuneError(`${where}: ${e.message}`);
    throw e;
  }
}

/** A run judged by the goal: its objective, each constraint and the search's score. */
export interface Judged {
  objective: number | null;
  constraints: TuneConstraintFigure[];
  score: Score;
  figures: PointFigures;
}

/**
 * Figures are rounded as the result JSON rounds them (as a gate judges them), so a point the
 * tuner calls feasible passes `stormlab run --expect` with the same constraint. A run that
 * never recovered has a recovery time of "never" (infinite), as in a gate.
 */
export function judgeRun(goal: TuneGoal, run: RunResult): Judged {
  const raw = figure(goal.objective, run);
  const objective = raw === null || !Number.isFinite(raw) ? null : raw;
  const constraints = goal.constraints.map((e) => {
    const actual = figure(e.metric, run) ?? (e.metric.name === 'recoveryMs' ? Infinity : null);
    return { actual, holds: actual !== null && holds(actual, e.op, e.threshold), violation: violation(e, actual) };
  });
  const total = Math.min(
    WORST,
    constraints.reduce((s, c) => s + c.violation, 0),
  );
  return {
    objective,
    constraints: constraints.map((c) => ({
      actual: c.actual === null || !Number.isFinite(c.actual) ? null : c.actual,
      holds: c.holds,
    })),
    score: { objective, violation: total, tiebreak: round6(run.amplification) },
    figures: pointFigures(run),
  };
}

export function figure(metric: Metric, run: RunResult): number | null {
  const v = metric.value(run);
  return v === null ? null : round6(v);
}

/**
 * How far `actual` misses the constraint, relative to its threshold so constraints in
 * different units add up: 0 when it holds, else at least 1e-9 (a strict `<` missed by
 * equality is still missed), at most `WORST`.
 */
export function violation(e: Pick<Expectation, 'op' | 'threshold'>, actual: number | null): number {
  if (actual === null) return WORST;
  if (holds(actual, e.op, e.threshold)) return 0;
  const miss =
    e.op === '<' || e.op === '<='
      ? actual - e.threshold
      : e.op === '>' || e.op === '>='
        ? e.threshold - actual
        : Math.abs(actual - e.threshold);
  const scale = e.threshold !== 0 ? Math.abs(e.threshold) : 1;
  return Math.min(WORST, Math.max(1e-9, miss / scale));
}

/** The figures every point reports, as a sweep reports them. */
export function pointFigures(run: RunResult): PointFigures {
  const shed = run.layers.reduce((s, l) => s + SHED_REASONS.reduce((a, k) => a + (l.shed[k] ?? 0), 0), 0);
  return {
    amplification: round6(run.amplification),
    goodput: round6(run.goodput),
    successRate: round6(run.successRate),
    p99Ms: round6(run.roots.latencyMs.p99),
    wastedTokens: run.upstream.wastedTokens,
    shed,
    recoveryMs: run.recoveryMs,
  };
}
