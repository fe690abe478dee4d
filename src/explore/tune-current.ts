import { parseDuration } from '../scenario/duration.js';
import type { Scenario } from '../scenario/scenario.js';
import { parsePath } from '../scenario/set-override.js';
import { resolveEngine } from '../traffic/engine-guard.js';
import { KNOB_RANGES, knobOf } from './tune-ranges.js';
import type { TuneParam } from './tune-params.js';

/**
 * The value a parameter has in the scenario as run (after the variant's overrides): what the
 * document says at its path (`[*]` reads the first element), else, for an engine knob, what
 * that engine runs with (`engineValue`); `null` when it is off (`breaker: false`) or unknown.
 */
export function currentValue(scenario: Scenario, param: TuneParam): number | null {
  const parsed = parsePath(param.path);
  if (!parsed.ok) return null;
  let node: unknown = scenario.document;
  for (const seg of parsed.segments) {
    if (node === false) return null;
    if (typeof node !== 'object' || node === null) return fallback(scenario, param);
    node =
      'key' in seg ? (node as Record<string, unknown>)[seg.key] : (node as unknown[])['index' in seg ? seg.index : 0];
  }
  if (node === false) return null;
  if (typeof node === 'number') return node;
  if (typeof node === 'string')
    return (param.duration ? parseDuration(node) : Number.isFinite(Number(node)) ? Number(node) : undefined) ?? null;
  return fallback(scenario, param);
}

function fallback(scenario: Scenario, param: TuneParam): number | null {
  const knob = knobOf(param.path);
  if (knob === undefined) return null;
  const value = engineValue(scenario, param.path, knob);
  return value === undefined ? (KNOB_RANGES[knob]?.fallback ?? null) : value;
}

/**
 * Knob `knob` (`throttle.k`) of the engine at `path`'s place (the scenario's block, or layer
 * i's own over it) as `resolveEngine` builds it — the profile's value when nobody sets it;
 * `null` when that option is off, undefined when the profile leaves it to the primitive.
 */
function engineValue(scenario: Scenario, path: string, knob: string): number | null | undefined {
  const layer = /^layers\[(\d+|\*)\]\.retry\.engine\./.exec(path);
  const retry = layer === null ? undefined : scenario.traffic.layers[layer[1] === '*' ? 0 : Number(layer[1])]?.retry;
  const over = retry?.policy === 'engine' ? retry.engine : {};
  let node: unknown = resolveEngine(scenario.traffic.engine, over);
  for (const key of knob.split('.')) {
    if (node === false) return null;
    node = (node as Record<string, unknown>)[key];
  }
  return typeof node === 'number' ? node : node === false ? null : undefined;
}
