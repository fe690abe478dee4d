import { parseDuration } from '../scenario/duration.js';
import type { Scenario } from '../scenario/scenario.js';
import { parsePath } from '../scenario/set-override.js';
import { KNOB_RANGES, knobOf } from './tune-ranges.js';
import type { TuneParam } from './tune-params.js';

/**
 * The value a parameter has in the scenario as run (after the variant's overrides): what the
 * document says at its path (`[*]` reads the first element), else the engine's default for an
 * engine knob; `null` when it is off (`breaker: false`) or unknown.
 */
export function currentValue(scenario: Scenario, param: TuneParam): number | null {
  const parsed = parsePath(param.path);
  if (!parsed.ok) return null;
  let node: unknown = scenario.document;
  for (const seg of parsed.segments) {
    if (node === false) return null;
    if (typeof node !== 'object' || node === null) return fallback(param);
    node =
      'key' in seg ? (node as Record<string, unknown>)[seg.key] : (node as unknown[])['index' in seg ? seg.index : 0];
  }
  if (node === false) return null;
  if (typeof node === 'number') return node;
  if (typeof node === 'string')
    return (param.duration ? parseDuration(node) : Number.isFinite(Number(node)) ? Number(node) : undefined) ?? null;
  return fallback(param);
}

function fallback(param: TuneParam): number | null {
  const knob = knobOf(param.path);
  return knob === undefined ? null : (KNOB_RANGES[knob]?.fallback ?? null);
}
