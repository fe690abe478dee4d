import type { RunResult } from '../../run/metrics/result.js';
import type { ResultFile } from '../../run/metrics/result.js';
import { RESULT_SCHEMA } from '../../run/metrics/result.js';
import { Simulation, type RunSpec } from '../../run/sim/simulation.js';
import type { Scenario } from '../../scenario/scenario.js';
import type { Io } from '../io.js';

/** The run spec of a resolved scenario. */
export function specOf(s: Scenario, name: string): RunSpec {
  return { name, seed: s.seed, durationMs: s.durationMs, drainMs: s.drainMs, traffic: s.traffic, upstream: s.upstream };
}

/**
 * Runs each (name, scenario) pair in simulation with the same seed and gathers a result file.
 * Wall-clock figures go in `timing` only.
 */
export function simulateAll(io: Io, scenarioName: string, seed: number, runs: Array<{ name: string; scenario: Scenario }>): ResultFile {
  const variants: RunResult[] = [];
  const perVariant: Array<{ name: string; wallMs: number; attemptsPerSec: number }> = [];
  const t0 = io.wallNow();
  let attempts = 0;
  for (const r of runs) {
    const start = io.wallNow();
    const sim = new Simulation(specOf(r.scenario, r.name));
    const result = sim.run();
    sim.metrics.destroy();
    const wallMs = io.wallNow() - start;
    attempts += result.upstream.attempts;
    variants.push(result);
    perVariant.push({ name: r.name, wallMs, attemptsPerSec: wallMs > 0 ? Math.round((result.upstream.attempts / wallMs) * 1000) : 0 });
  }
  const wallMs = io.wallNow() - t0;
  return {
    schema: RESULT_SCHEMA,
    scenario: scenarioName,
    seed,
    mode: 'sim',
    variants,
    timing: { wallMs, attemptsPerSec: wallMs > 0 ? Math.round((attempts / wallMs) * 1000) : 0, variants: perVariant },
  } as ResultFile;
}
