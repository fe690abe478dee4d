import type { TuneFile, TuneParamInfo, TunePoint } from '../report/tune-report.js';
import { paramValue, TUNE_SCHEMA } from '../report/tune-report.js';
import { refusedLine } from '../report/refused-line.js';
import { RefusedError } from './refused-error.js';
import {
  isRefused,
  type PointJob,
  type PointOutcome,
  type RunPointsFn,
  type WorkerChoice,
  type WorkerCount,
} from './run-points.js';
import { lexicographic } from './search-rank.js';
import { searchSpace, type Evaluated, type Score, type SearchRound } from './search-space.js';
import type { EffectiveScenario, RunResult } from '../run/metrics/result.js';
import { round6 } from '../run/metrics/round.js';
import { bySeed, withSeeds } from './seeded-points.js';
import type { TuneGoal } from './tune-goal.js';
import { judgeSeeds, noiseVerdict, type SeededJudged } from './tune-seeds.js';
import type { TuneParam } from './tune-params.js';

export interface TuneSpec {
  job: PointJob;
  /** For the file: the scenario's name, the variant run, its seed and duration. */
  scenario: string;
  variant: string;
  seed: number;
  durationMs: number;
  params: Array<TuneParam & { current: number | null }>;
  goal: TuneGoal;
  budget: number;
  /** The seeds every point (and the baseline) runs on, when more than the scenario's one. */
  seeds?: number[];
  /** What every point runs before its own values, for the file (see `TuneFile.effective`). */
  effective?: EffectiveScenario;
  workers: WorkerCount;
  /** Once a batch's workers are chosen (`auto` says what it chose, on the first batch). */
  onWorkers?: (choice: WorkerChoice) => void;
  /** After each round of the search (for progress lines). */
  onRound?: (round: SearchRound) => void;
  /** After each simulated run of a round's batch. */
  onDone?: (done: number, total: number) => void;
  /** Wall-clock ms, for `timing` only. */
  wallNow: () => number;
}

/** What a refused point scores: infeasible beyond any simulated point, so it ranks last and the search moves away from it. */
const REFUSED: Score = { objective: null, violation: Infinity };

/**
 * Searches the parameters by simulation: each round's points run as one batch through
 * `runPoints` (in parallel with workers), every point with the same seed. The scenario as
 * written (the baseline) runs in the first batch too, and the current values, when inside the
 * ranges, are a point of the search that wins ties: so the answer is never worse than what is
 * there already, and differs from it only for a better figure.
 *
 * A point whose values are refused together (breaker.openMs above maxOpenMs) is infeasible:
 * it spends its place in the budget, ranks below every simulated point, and is listed in the
 * file's `refused`. A refused baseline, or a search with every point refused, throws a
 * `RefusedError`: there is nothing to compare.
 */
export async function tune(spec: TuneSpec, runPoints: RunPointsFn): Promise<TuneFile> {
  const start = spec.wallNow();
  const judged = new Map<string, SeededJudged>();
  const refused = new Map<string, { reason: string; sets: string[] }>();
  let baseline: SeededJudged | undefined;
  const seeds = spec.seeds ?? [];
  let used = 1;
  const onWorkers = (c: WorkerChoice): void => {
    used = Math.max(used, c.used);
    spec.onWorkers?.(c);
  };
  const evaluate = async (points: number[][]): Promise<Score[]> => {
    const sets = points.map((p) => setTexts(spec.params, p));
    const batch = baseline === undefined ? [[], ...sets] : sets;
    const flat = await runPoints(spec.job, withSeeds(batch, seeds), {
      workers: spec.workers,
      onDone: spec.onDone,
      onWorkers,
    });
    const outcomes = bySeed(flat, Math.max(1, seeds.length));
    if (baseline === undefined) baseline = judgeBaseline(spec, outcomes.shift()!);
    return points.map((p, i) => {
      const runs = outcomes[i];
      const o = runs.find(isRefused);
      if (o !== undefined) {
        refused.set(p.join(','), { reason: o.refused, sets: sets[i] });
        return REFUSED;
      }
      const j = judgeSeeds(spec.goal, runs as RunResult[]);
      judged.set(p.join(','), j);
      return j.score;
    });
  };
  const current = spec.params.map((p) => p.current);
  const inside = current.every((v, i) => v !== null && v >= spec.params[i].min && v <= spec.params[i].max);
  const result = await searchSpace(spec.params, evaluate, {
    goal: spec.goal.direction,
    budget: spec.budget,
    extra: inside ? [current as number[]] : [],
    home: inside ? (current as number[]) : undefined,
    onRound: spec.onRound,
  });
  const ran = result.ranked.filter((e) => !refused.has(e.point.join(',')));
  const skipped = result.ranked
    .filter((e) => refused.has(e.point.join(',')))
    .sort((a, b) => a.round - b.round || lexicographic(a.point, b.point));
  if (ran.length === 0) {
    const first = refused.get(skipped[0].point.join(','))!;
    throw new RefusedError(
      refusedLine(skipped.length, skipped.length, { point: first.sets.join(' '), reason: first.reason }),
    );
  }
  const point = (e: Evaluated): TunePoint => toPoint(e.point, judged.get(e.point.join(','))!, e.round);
  const noise = noiseVerdict(spec.goal.direction, judged.get(ran[0].point.join(','))!.perSeed, baseline!.perSeed);
  return {
    schema: TUNE_SCHEMA,
    scenario: spec.scenario,
    variant: spec.variant,
    seed: spec.seed,
    ...(seeds.length > 1 ? { seeds } : {}),
    durationMs: spec.durationMs,
    objective: {
      direction: spec.goal.direction,
      text: spec.goal.objectiveText,
      metric: spec.goal.objective.name,
      unit: spec.goal.objective.unit,
    },
    constraints: spec.goal.constraints.map((e) => ({
      text: e.text,
      metric: e.metric.name,
      op: e.op,
      threshold: e.threshold,
      thresholdText: e.thresholdText,
      unit: e.metric.unit,
    })),
    params: spec.params.map(paramInfo),
    feasible: result.feasible,
    best: point(ran[0]),
    baseline: toPoint(current, baseline!, 0),
    ...(noise === undefined ? {} : { noise }),
    points: ran.map(point),
    ...(skipped.length > 0
      ? {
          refused: skipped.map((e) => ({
            values: e.point,
            reason: refused.get(e.point.join(','))!.reason,
            round: e.round,
          })),
        }
      : {}),
    search: {
      budget: spec.budget,
      evaluations: result.evaluations,
      rounds: result.rounds.map((r) => ({
        round: r.round,
        box: r.box,
        evaluated: r.evaluated,
        reused: r.reused,
        best: r.best.point,
      })),
      stopped: result.stopped,
    },
    ...(spec.effective === undefined ? {} : { effective: spec.effective }),
    timing: { wallMs: spec.wallNow() - start, workers: used },
  };
}

/** The scenario as written, judged; refused, it is bad input (the ranges were never the problem). */
function judgeBaseline(spec: TuneSpec, runs: PointOutcome[]): SeededJudged {
  const o = runs.find(isRefused);
  if (o !== undefined)
    throw new RefusedError(
      `the scenario as written (the baseline every point is compared with) is refused: ${o.refused}`,
    );
  return judgeSeeds(spec.goal, runs as RunResult[]);
}

/** A point's `--set` texts: `engine.throttle.k=1.75`, `engine.breaker.openMs=2.5s`. */
export function setTexts(params: readonly TuneParam[], point: readonly number[]): string[] {
  return params.map((p, i) => `${p.path}=${paramValue(p, point[i])}`);
}

function toPoint(values: Array<number | null>, j: SeededJudged, round: number): TunePoint {
  return {
    values,
    objective: j.objective,
    ...(j.interval === undefined ? {} : { interval: { low: round6(j.interval.low), high: round6(j.interval.high) } }),
    constraints: j.constraints,
    feasible: j.score.violation === 0,
    violation: j.score.violation,
    figures: j.figures,
    round,
  };
}

function paramInfo(p: TuneParam & { current: number | null }): TuneParamInfo {
  return {
    path: p.path,
    min: p.min,
    max: p.max,
    scale: p.scale ?? 'linear',
    integer: p.integer ?? false,
    duration: p.duration,
    builtIn: p.builtIn,
    current: p.current,
  };
}
