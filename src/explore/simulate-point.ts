import type { RunResult } from '../run/metrics/result.js';
import { runSpecOf } from '../run/run-spec.js';
import { Simulation } from '../run/sim/simulation.js';
import { loadScenarioArg } from '../scenario/load-scenario-arg.js';
import type { Scenario } from '../scenario/scenario.js';
import { resolveVariant } from '../scenario/variants.js';
import { refusalOf, type PointOutcome } from './point-refusal.js';

/** What every point of a sweep or tune runs: the scenario as the user named it, the base `--set`s (seed and duration included), the variant. */
export interface PointJob {
  /** A file path (relative to `cwd`) or a bundled scenario's name, as given on the command line. */
  scenario: string;
  cwd: string;
  set: string[];
  /** The variant to run; none runs the scenario as written. */
  variant?: string;
}

/**
 * The scenario of one point: the job's `--set`s, then the point's, on the base document, then
 * the variant's overrides on top (as `run --variant` does), loaded as every command loads it.
 */
export function loadPoint(job: PointJob, sets: readonly string[]): Scenario {
  const s = loadScenarioArg(job.scenario, [...job.set, ...sets], job.cwd);
  return job.variant === undefined ? s : resolveVariant(s, job.variant);
}

/**
 * Simulates one point to its end and returns its result. The run is
 * named after the variant (or the scenario), as `run` names it.
 */
export function simulatePoint(job: PointJob, sets: readonly string[]): RunResult {
  const s = loadPoint(job, sets);
  const sim = new Simulation(runSpecOf(s, job.variant ?? s.name));
  sim.advanceTo(Infinity);
  return sim.result();
}

/**
 * `simulatePoint`, with a point whose values are refused given back as a `RefusedPoint`;
 * anything else thrown is a bug and goes on up.
 */
export function pointOutcome(job: PointJob, sets: readonly string[]): PointOutcome {
  try {
    return simulatePoint(job, sets);
  } catch (e) {
    const refused = refusalOf(e);
    if (refused === undefined) throw e;
    return { refused };
  }
}
