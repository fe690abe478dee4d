import { OptionError } from '../engine/errors.js';
import type { ToolPolicy } from '../upstream/config.js';
import { isObject } from './dialect.js';

export type { ToolPolicy };

export const TOOL_POLICY_DEFAULTS: ToolPolicy = {
  /** One tool turn, then the answer: the smallest loop that has two model calls. @default 1 */
  rounds: 1,
  /** @default 1 */
  parallel: 1,
  /** @default 'cycle' */
  pick: 'cycle',
};

/** Bounds of the numeric fields, [min, max]. */
export const TOOL_POLICY_LIMITS = { rounds: [0, 100], parallel: [1, 16] } as const;

/** A policy from options or a control-API body; fields left out keep `base`. Throws an `OptionError` naming the bad field. */
export function parseToolPolicy(
  input: unknown,
  base: ToolPolicy = TOOL_POLICY_DEFAULTS,
  where = 'toolPolicy',
): ToolPolicy {
  if (!isObject(input))
    throw new OptionError(`${where}: expected an object like {"rounds": 2}, got ${JSON.stringify(input)}`);
  const out = { ...base };
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined) continue;
    if (key === 'rounds' || key === 'parallel') {
      const [lo, hi] = TOOL_POLICY_LIMITS[key];
      if (typeof value !== 'number' || !Number.isInteger(value) || value < lo || value > hi)
        throw new OptionError(`${where}.${key}: expected an integer from ${lo} to ${hi}, got ${JSON.stringify(value)}`);
      out[key] = value;
    } else if (key === 'pick') {
      if (value !== 'cycle' && value !== 'seeded')
        throw new OptionError(`${where}.pick: expected "cycle" or "seeded", got ${JSON.stringify(value)}`);
      out.pick = value;
    } else throw new OptionError(`${where}: unknown field "${key}" (known: rounds, parallel, pick)`);
  }
  return out;
}
