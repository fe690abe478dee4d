import type { TrafficConfig } from '../traffic/config.js';
import type { UpstreamConfig } from '../upstream/config.js';

/**
 * One variant of a scenario, resolved: everything a run needs, and the contract of both
 * drivers (`Simulation` and `LiveRun` take it alike).
 */
export interface RunSpec {
  name: string;
  seed: number;
  durationMs: number;
  /** After `durationMs` no new roots arrive; the run ends when all work is done or this runs out. */
  drainMs: number;
  traffic: TrafficConfig;
  upstream: UpstreamConfig;
}

/** The run spec named `name` of a resolved scenario (a `Scenario` has every field it needs). */
export function runSpecOf(s: Omit<RunSpec, 'name'>, name: string): RunSpec {
  return { name, seed: s.seed, durationMs: s.durationMs, drainMs: s.drainMs, traffic: s.traffic, upstream: s.upstream };
}
