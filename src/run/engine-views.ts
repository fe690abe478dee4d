import type { TrafficInterpreter } from '../traffic/interpreter.js';
import type { RunView } from './run-view.js';
import type { RunSpec } from './sim/simulation.js';

/** The engine's state at each layer that runs it, for a dashboard's `RunView`. */
export function engineViews(spec: RunSpec, traffic: TrafficInterpreter, now: number): RunView['engines'] {
  const engines: RunView['engines'] = [];
  spec.traffic.layers.forEach((l, i) => {
    const g = traffic.guardOf(i);
    if (g !== undefined) engines.push({ layer: l.name, guard: g.snapshot(now) });
  });
  return engines;
}
