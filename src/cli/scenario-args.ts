import { loadScenarioArg } from '../scenario/load-scenario-arg.js';
import { resolveVariant } from '../scenario/variants.js';
import type { Scenario } from '../scenario/scenario.js';
import { parseDuration } from '../scenario/duration.js';
import { UsageError } from './io.js';
import { variantNames } from './run-scenario.js';

export interface ScenarioFlags {
  seed?: string;
  set?: string[];
  duration?: string;
}

/** The largest seed a scenario takes (seeds are 32-bit). */
const MAX_SEED = 0xffffffff;

/** Parses `--seed`: an integer from 0 to 2^32 − 1, checked here so the message names the flag, not the file. */
export function parseSeed(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || n > MAX_SEED)
    throw new UsageError(`--seed: expected an integer from 0 to ${MAX_SEED}, got ${JSON.stringify(raw)}`);
  return n;
}

/**
 * Checks `--duration`. A unit is required: in a scenario a bare number is milliseconds, so
 * `--duration 10` would quietly run for 10 ms when 10 s was almost surely meant.
 */
export function checkDuration(raw: string): void {
  const ms = parseDuration(raw);
  const got = JSON.stringify(raw);
  if (ms === undefined) throw new UsageError(`--duration: expected a duration like 30s or 2m, got ${got}`);
  if (/^\s*[\d.]+\s*$/.test(raw))
    throw new UsageError(`--duration: expected a duration with a unit, like 30s or 2m, got ${got}`);
  if (ms <= 0) throw new UsageError(`--duration: expected a duration above 0, like 30s or 2m, got ${got}`);
}

/** The `--set`s a command applies: the user's, then --duration and --seed as overrides (both checked). */
export function scenarioSets(flags: ScenarioFlags): string[] {
  const set = [...(flags.set ?? [])];
  if (flags.duration !== undefined) {
    checkDuration(flags.duration);
    set.push(`duration=${flags.duration}`);
  }
  const seed = parseSeed(flags.seed);
  if (seed !== undefined) set.push(`seed=${seed}`);
  return set;
}

/** Loads the scenario a command names, with --set, --duration and --seed applied. */
export function scenarioFromFlags(arg: string, flags: ScenarioFlags, cwd: string): Scenario {
  return loadScenarioArg(arg, scenarioSets(flags), cwd);
}

/**
 * The variants a compare runs: those asked for, in order, or all the scenario has. `flag` is
 * the option they came from (`--variants`, or `--variant` for run), for messages.
 */
export function pickVariants(
  s: Scenario,
  wanted: string | undefined,
  flag = '--variants',
): Array<{ name: string; scenario: Scenario }> {
  return variantNames(s, wanted, flag).map((name) => ({ name, scenario: resolveVariant(s, name) }));
}
