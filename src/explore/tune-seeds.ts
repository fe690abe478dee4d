import { holds } from '../gate/expectation.js';
import type { PointFigures } from '../report/sweep-file.js';
import type { RunResult } from '../run/metrics/result.js';
import { round6 } from '../run/metrics/round.js';
import { type Interval, meanInterval, pairedDifference } from './seed-stats.js';
import { figure, judgeRun, pointFigures, type Judged, type TuneGoal, violation, WORST } from './tune-goal.js';

/** A point judged over its seeds: means, and the objective of each seed (for paired comparisons). */
export interface SeededJudged extends Judged {
  /** The objective on each seed, in seed order (null: that seed had none). */
  perSeed: Array<number | null>;
  /** The objective's 95 % interval over the seeds; absent with one seed, or when a seed had none. */
  interval?: Interval;
}

/**
 * Judges a point by its runs, one per seed: the objective, every constraint and the figures are
 * means over the seeds, and the constraints are judged on those means (as a gate would judge
 * the mean of several runs). One run is judged as `judgeRun` judges it.
 */
export function judgeSeeds(goal: TuneGoal, runs: readonly RunResult[]): SeededJudged {
  if (runs.length === 0) throw new RangeError('judgeSeeds: expected at least one run');
  if (runs.length === 1) {
    const j = judgeRun(goal, runs[0]);
    return { ...j, perSeed: [j.objective] };
  }
  const perSeed = runs.map((r) => {
    const v = figure(goal.objective, r);
    return v === null || !Number.isFinite(v) ? null : v;
  });
  const known = perSeed.every((v): v is number => v !== null);
  const interval = known ? meanInterval(perSeed) : undefined;
  const objective = interval === undefined ? null : round6(interval.mean);
  const constraints = goal.constraints.map((e) => {
    const values = runs.map((r) => figure(e.metric, r) ?? (e.metric.name === 'recoveryMs' ? Infinity : null));
    const actual = values.some((v) => v === null) ? null : round6(mean(values as number[]));
    return { actual, holds: actual !== null && holds(actual, e.op, e.threshold), violation: violation(e, actual) };
  });
  return {
    objective,
    constraints: constraints.map((c) => ({
      actual: c.actual === null || !Number.isFinite(c.actual) ? null : c.actual,
      holds: c.holds,
    })),
    score: {
      objective,
      violation: Math.min(
        WORST,
        constraints.reduce((s, c) => s + c.violation, 0),
      ),
      tiebreak: round6(mean(runs.map((r) => r.amplification))),
    },
    figures: meanFigures(runs.map(pointFigures)),
    perSeed,
    interval,
  };
}

function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

function meanFigures(all: PointFigures[]): PointFigures {
  const m = (get: (f: PointFigures) => number): number => round6(mean(all.map(get)));
  return {
    amplification: m((f) => f.amplification),
    goodput: m((f) => f.goodput),
    successRate: m((f) => f.successRate),
    p99Ms: m((f) => f.p99Ms),
    wastedTokens: m((f) => f.wastedTokens),
    shed: m((f) => f.shed),
    recoveryMs: all.every((f) => f.recoveryMs !== null) ? m((f) => f.recoveryMs as number) : null,
  };
}

/** Whether the answer beats the current values beyond the seeds' noise, and by how much. */
export interface NoiseVerdict {
  /** The paired difference answer − current of the objective over the same seeds, and its 95 % interval. */
  difference: { mean: number; low: number; high: number };
  /** The whole interval is on the better side of 0: not luck (at 95 %). */
  beyondNoise: boolean;
}

/**
 * Compares the answer with the current values seed by seed (both ran on the same seeds, so
 * each seed's luck cancels in the difference). Undefined with one seed, or when either lacks
 * an objective on some seed.
 */
export function noiseVerdict(
  direction: TuneGoal['direction'],
  best: readonly (number | null)[],
  current: readonly (number | null)[],
): NoiseVerdict | undefined {
  if (best.length < 2 || best.length !== current.length) return undefined;
  if (best.some((v) => v === null) || current.some((v) => v === null)) return undefined;
  const d = pairedDifference(best as number[], current as number[]);
  const beyondNoise = direction === 'maximize' ? d.low > 0 : d.high < 0;
  return { difference: { mean: round6(d.mean), low: round6(d.low), high: round6(d.high) }, beyondNoise };
}
