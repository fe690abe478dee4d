import { OptionError } from '../engine/errors.js';
import type { RunResult } from '../run/metrics/result.js';
import { scenarioWording } from '../scenario/engine-problems.js';
import { ScenarioError, shownProblems } from '../scenario/scenario-error.js';

/**
 * A point whose values the scenario or the engine refuses together (a breaker's `openMs` above
 * its `maxOpenMs`, a backoff base above its cap, a prompt `min` above its `max`). Each value
 * was checked alone before anything ran, so this is a corner of the user's grid or ranges, not
 * a mistake to stop for: sweeps show it as refused, the tuner counts it infeasible, and only
 * when every point is refused is it bad input.
 */
export interface RefusedPoint {
  /** Why, on one line: `engine: breaker.maxOpenMs must be a number >= 60000, got 30000`. */
  refused: string;
}

/** What simulating one point gives: its run, or why it could not run. */
export type PointOutcome = RunResult | RefusedPoint;

export function isRefused(o: PointOutcome | { runs: RunResult[] }): o is RefusedPoint {
  return 'refused' in o;
}

/**
 * Who the loader says a problem of one point's document is (`--set "engine.breaker.maxOpenMs=30s": `,
 * `--set "…" with variant engine: `, `variants.engine: `): the point's values and the sweep's
 * variant together, every time, so it says nothing about this point.
 */
const WHOSE = /^(?:--set "[^"]*"(?: with variants? [^:]+)?|variants\.[^:]+): /;

/**
 * The one-line reason when `e` is a refusal (the scenario does not validate, or the engine
 * refuses its options when the run builds it); undefined for anything else, which is a bug.
 * A clash is the whole point's doing, so who the loader blames (`WHOSE`) goes.
 */
export function refusalOf(e: unknown): string | undefined {
  if (e instanceof ScenarioError) return shownProblems(e.problems.map((p) => p.replace(WHOSE, ''))).join('; ');
  if (e instanceof OptionError) return `engine: ${scenarioWording(e)}`;
  return undefined;
}

/**
 * Whether a scenario problem is a clash of engine options each fine alone — the engine's own
 * verdict on how they fit together, which the loader words `engine: …` or
 * `layers[0].retry.engine: …` (a wrong value alone has its own path, `engine.breaker.openMs: …`,
 * and a wrong block reads `engine: expected a mapping …`). Checks of one value, or of a range's
 * ends, before a sweep or tune leave these to the points: there they are refused, not fatal.
 */
export function isEngineClash(problem: string): boolean {
  return /^(?:engine|layers\[\d+\]\.retry\.engine): (?!expected )/.test(problem.replace(WHOSE, ''));
}
