import type { TrafficInterpreter } from '../traffic/interpreter.js';
import { replicaSnapshot } from './replica-snapshot.js';
import type { RunView } from './run-view.js';
import type { RunSpec } from './run-spec.js';

/** The engine's state at each layer that runs it, for a dashboard's `RunView` (its replicas merged: see `replicaSnapshot`). */
export function engineViews(spec: RunSpec, traffic: TrafficInterpreter, now: number): RunView['engines'] {
  const engines: RunView['engines'] = [];
  spec.traffic.layers.forEach((l, i) => {
    const e = traffic.enginesOf(i);
    if (e !== undefined) engines.push({ layer: l.name, ...replicaSnapshot(e, now) });
  });
  return engines;
}
