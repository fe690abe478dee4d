import type { CommandSet } from '../scenario/scenario-request.js';
import { parseDuration } from '../scenario/duration.js';
import { UsageError } from './io.js';

// Light on purpose: `run` of a bundled scenario as written imports this and must not load the
// scenario loader (the YAML parser, the schema); see scenario/effective-scenario.ts.

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

/**
 * The command line's overrides, in the order they apply (after the variant's, so they win):
 * the user's `--set`s, then --duration and --seed (both checked).
 */
export function scenarioSets(flags: ScenarioFlags): CommandSet[] {
  const set: CommandSet[] = (flags.set ?? []).map((text) => ({ text, from: '--set' }));
  if (flags.duration !== undefined) {
    checkDuration(flags.duration);
    set.push({ text: `duration=${flags.duration}`, from: '--duration' });
  }
  const seed = parseSeed(flags.seed);
  if (seed !== undefined) set.push({ text: `seed=${seed}`, from: '--seed' });
  return set;
}

/** `--variants a,b` (or `--variant a`): the names, in order; an empty list is refused. */
export function variantList(raw: string, flag: string): string[] {
  const names = raw
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  if (names.length === 0)
    throw new UsageError(`${flag}: expected a comma-separated list of variant names, got ${JSON.stringify(raw)}`);
  return names;
}

/** `--variant`: one name (compare --variants a,b runs several). */
export function oneVariant(raw: string): string {
  if (raw.includes(',') || raw.trim() === '')
    throw new UsageError(
      `--variant: expected one variant name (compare --variants a,b runs several), got ${JSON.stringify(raw)}`,
    );
  return raw.trim();
}
