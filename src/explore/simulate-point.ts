import type { RunResult } from '../run/metrics/result.js';
import { runSpecOf } from '../run/run-spec.js';
import { Simulation } from '../run/sim/simulation.js';
import { resolveScenario } from '../scenario/resolve-scenario.js';
import type { Scenario } from '../scenario/scenario.js';
import { refusalOf, type PointOutcome } from './point-refusal.js';

/** What every point of a sweep or tune runs: the scenario as the user named it, the base `--set`s (seed and duration included), the variant. */
export interface PointJob {
  /** A file path (relative to `cwd`) or a bundled scenario's name, as given on the command line. */
  scenario: string;
  cwd: string;
  /** The command line's `path=value` overrides (`--set`, then `duration=` and `seed=` for --duration and --seed). */
  set: string[];
  /** The variant to run; none runs the scenario as written. */
  variant?: string;
}

/**
 * The scenario of one point, resolved as `run --variant` resolves one: the file, the
 * variant's overrides, then the command line's — the job's `--set`s, then the point's values
 * (and its seed), which are command-line values too, so they win over the variant's.
 */
export function loadPoint(job: PointJob, sets: readonly string[]): Scenario {
  const set = [...job.set, ...sets].map((text) => ({ text, from: '--set' }));
  const variants = job.variant === undefined ? undefined : [job.variant];
  return resolveScenario({ arg: job.scenario, cwd: job.cwd, set, variants, flag: '--variant' }).runs[0].scenario;
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
