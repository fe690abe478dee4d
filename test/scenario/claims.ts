import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { RunResult, SeriesResult } from '../../src/run/metrics/result.js';
import { Simulation } from '../../src/run/sim/simulation.js';
import { BUNDLED_DIR } from '../../src/scenario/bundled.js';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import type { Scenario } from '../../src/scenario/scenario.js';

/** A scenario as loaded (with its `--set` flags) and the result of each of its variants. */
export interface Runs {
  scenario: Scenario;
  results: Record<string, RunResult>;
}

/**
 * Loads a bundled scenario (or inline scenario text) with `set` flags and runs every variant
 * in simulation, the way `stormlab compare` does: each variant's overrides, then the flags.
 */
export function runAll(nameOrText: string, set: string[] = []): Runs {
  const scenario = loadScenario(nameOrText, { set });
  const results: Record<string, RunResult> = {};
  for (const v of scenario.variants)
    results[v.name] = simulate(loadScenario(nameOrText, { set, variant: v.name }), v.name);
  return { scenario, results };
}

function simulate(s: Scenario, name: string): RunResult {
  const sim = new Simulation({
    name,
    seed: s.seed,
    durationMs: s.durationMs,
    drainMs: s.drainMs,
    traffic: s.traffic,
    upstream: s.upstream,
  });
  return sim.run();
}

/** The text of a bundled scenario file. */
export function bundledText(name: string): string {
  return readFileSync(join(BUNDLED_DIR, `${name}.yaml`), 'utf8');
}

/** Fault phase `i` of a scenario, in whole seconds (series bins are 1 s). */
export function phase(s: Scenario, i = 0): { from: number; to: number } {
  const f = s.upstream.faults[i];
  expect(f, `fault phase ${i}`).toBeDefined();
  return { from: Math.floor(f.fromMs / 1000), to: Math.ceil(f.toMs / 1000) };
}

/** The run's length in whole seconds (the bins after it are drain time). */
export function runSeconds(s: Scenario): number {
  return Math.ceil(s.durationMs / 1000);
}

/** Mean of the per-second bins [from, to) of a series. */
export function mean(bins: readonly number[], from: number, to: number): number {
  expect(to, `empty window [${from}, ${to})`).toBeGreaterThan(from);
  let sum = 0;
  for (let b = from; b < to; b++) sum += bins[b] ?? 0;
  return sum / (to - from);
}

/** Goodput (roots ok within deadline) per second over [from, to). */
export function goodputOver(r: RunResult, from: number, to: number): number {
  return mean(r.series.ok, from, to);
}

/** Upstream attempts ÷ logical leaf calls over the bins [from, to). */
export function amplificationOver(series: SeriesResult, from: number, to: number): number {
  return mean(series.upstreamAttempts, from, to) / mean(series.leafCalls, from, to);
}

/** The lowest mean goodput of any `width`-second window inside [from, to). */
export function worstWindow(r: RunResult, from: number, to: number, width: number): number {
  let worst = Infinity;
  for (let b = from; b + width <= to; b++) worst = Math.min(worst, goodputOver(r, b, b + width));
  return worst;
}

/**
 * The first seconds of a run have no goodput yet (root tasks take seconds), so "before the
 * fault" starts here.
 */
export const WARM_UP = 5;
