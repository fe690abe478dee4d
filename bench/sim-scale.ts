import { loadScenario } from '../src/scenario/load-scenario.js';
import type { Scenario } from '../src/scenario/scenario.js';
import type { RunSpec } from '../src/run/run-spec.js';

/** The bundled scenario the simulator suite runs. */
export const SIM_SCENARIO = 'retry-storm';

/**
 * retry-storm's variant `variant`, scaled: `durationMs` of arrivals at `rate` root tasks/s, and
 * every fault phase stretched to cover the whole run and its drain, so the outage (and with it
 * naive's 27× amplification) holds from the first root task to the last.
 *
 * The scaling is done on the resolved Scenario object, as `--set duration=… arrival.rate=…`
 * would, but without naming fault indexes the bundled file might reorder.
 */
export function scaledSpec(variant: string, rate: number, durationMs: number): RunSpec {
  const s: Scenario = loadScenario(SIM_SCENARIO, { variant });
  const end = durationMs + s.drainMs;
  return {
    name: `${SIM_SCENARIO}/${variant}`,
    seed: s.seed,
    durationMs,
    drainMs: s.drainMs,
    traffic: { ...s.traffic, arrival: { type: 'constant', rate } },
    upstream: {
      ...s.upstream,
      faults: s.upstream.faults.map((f) => ({ ...f, fromMs: Math.min(f.fromMs, 0), toMs: Math.max(f.toMs, end) })),
    },
  };
}

/** retry-storm's variant `variant` as bundled, unscaled. */
export function bundledSpec(variant: string): RunSpec {
  const s = loadScenario(SIM_SCENARIO, { variant });
  return {
    name: `${SIM_SCENARIO}/${variant}`,
    seed: s.seed,
    durationMs: s.durationMs,
    drainMs: s.drainMs,
    traffic: s.traffic,
    upstream: s.upstream,
  };
}
