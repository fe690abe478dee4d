import { resolve } from 'node:path';
import type { RunResult } from '../run/metrics/result.js';
import { Simulation } from '../run/sim/simulation.js';
import { BUNDLED_DIR, resolveScenarioPath } from '../scenario/bundled.js';
import { loadScenario } from '../scenario/load-scenario.js';
import { ScenarioError } from '../scenario/scenario-error.js';
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
 * the variant's overrides on top (as `run --variant` does). Paths resolve as the CLI resolves
 * them (`scenarioFromFlags`), so a worker thread finds the same file.
 */
export function loadPoint(job: PointJob, sets: readonly string[]): Scenario {
  const arg = job.scenario;
  const path = arg.includes('/') || arg.includes('.') ? resolve(job.cwd, arg) : arg;
  try {
    const s = { ...loadScenario(resolveScenarioPath(path, BUNDLED_DIR), { set: [...job.set, ...sets] }), source: arg };
    return job.variant === undefined ? s : resolveVariant(s, job.variant);
  } catch (e) {
    if (e instanceof ScenarioError && e.source !== arg) throw new ScenarioError(arg, e.problems);
    throw e;
  }
}

/**
 * Simulates one point to its end and returns its result, its histograms freed. The run is
 * named after the variant (or the scenario), as `run` names it. Needs `initHistograms()`
 * first for the WebAssembly histograms (the JS ones give the same figures, slower).
 */
export function simulatePoint(job: PointJob, sets: readonly string[]): RunResult {
  const s = loadPoint(job, sets);
  const sim = new Simulation({
    name: job.variant ?? s.name,
    seed: s.seed,
    durationMs: s.durationMs,
    drainMs: s.drainMs,
    traffic: s.traffic,
    upstream: s.upstream,
  });
  try {
    sim.advanceTo(Infinity);
    return sim.result();
  } finally {
    sim.metrics.destroy();
  }
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
