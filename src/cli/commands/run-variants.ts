import type { ResultFile, RunResult } from '../../run/metrics/result.js';
import { RESULT_SCHEMA } from '../../run/metrics/result.js';
import { Simulation } from '../../run/sim/simulation.js';
import { runSpecOf } from '../../run/run-spec.js';
import type { Scenario } from '../../scenario/scenario.js';
import type { Io } from '../io.js';

/** A variant being simulated, with the wall time spent stepping it. */
export interface SimRun {
  name: string;
  sim: Simulation;
  wallMs: number;
}

export function startRuns(runs: Array<{ name: string; scenario: Scenario }>): SimRun[] {
  return runs.map((r) => ({ name: r.name, sim: new Simulation(runSpecOf(r.scenario, r.name)), wallMs: 0 }));
}

/** Steps every run to virtual time `t`, charging each its own wall time. */
export function advanceAll(io: Io, runs: SimRun[], t: number): void {
  for (const r of runs) {
    const start = io.wallNow();
    r.sim.advanceTo(t);
    r.wallMs += io.wallNow() - start;
  }
}

/**
 * Gathers the runs' results (partial ones for runs stopped early) into a result file. Wall-clock figures go in `timing` only.
 */
export function collect(scenarioName: string, seed: number, runs: SimRun[]): ResultFile {
  const variants: RunResult[] = [];
  let attempts = 0;
  let wallMs = 0;
  for (const r of runs) {
    const result = r.sim.result();
    attempts += result.upstream.attempts;
    wallMs += r.wallMs;
    variants.push(result);
  }
  const rate = (n: number, ms: number): number => (ms > 0 ? Math.round((n / ms) * 1000) : 0);
  return {
    schema: RESULT_SCHEMA,
    scenario: scenarioName,
    seed,
    mode: 'sim',
    variants,
    timing: {
      wallMs,
      attemptsPerSec: rate(attempts, wallMs),
      variants: runs.map((r, i) => ({
        name: r.name,
        wallMs: r.wallMs,
        attemptsPerSec: rate(variants[i].upstream.attempts, r.wallMs),
      })),
    },
  };
}
