import { resolve } from 'node:path';
import { loadScenario } from '../scenario/load-scenario.js';
import { BUNDLED_DIR, resolveScenarioPath } from '../scenario/bundled.js';
import { resolveVariant } from '../scenario/variants.js';
import type { Scenario } from '../scenario/scenario.js';
import { parseDuration } from '../scenario/duration.js';
import { UsageError } from './io.js';

export interface ScenarioFlags {
  seed?: string;
  set?: string[];
  duration?: string;
}

/** Parses `--seed`: a non-negative integer. */
export function parseSeed(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(n)) throw new UsageError(`--seed: expected a non-negative integer, got ${JSON.stringify(raw)}`);
  return n;
}

/** Loads the scenario a command names, with --set, --duration and --seed applied. */
export function scenarioFromFlags(arg: string, flags: ScenarioFlags, cwd: string): Scenario {
  const set = [...(flags.set ?? [])];
  if (flags.duration !== undefined) {
    if (parseDuration(flags.duration) === undefined) throw new UsageError(`--duration: expected a duration like 30s or 500ms, got ${JSON.stringify(flags.duration)}`);
    set.push(`duration=${flags.duration}`);
  }
  const seed = parseSeed(flags.seed);
  if (seed !== undefined) set.push(`seed=${seed}`);
  const path = arg.includes('/') || arg.includes('.') ? resolve(cwd, arg) : arg;
  return loadScenario(resolveScenarioPath(path, BUNDLED_DIR), { set });
}

/** The variants a compare runs: those asked for, in order, or all the scenario has. */
export function pickVariants(s: Scenario, wanted: string | undefined): Array<{ name: string; scenario: Scenario }> {
  const names = wanted === undefined ? s.variants.map((v) => v.name) : wanted.split(',').map((v) => v.trim()).filter(Boolean);
  if (names.length === 0) throw new UsageError(`--variants: expected a comma-separated list of variant names, got ${JSON.stringify(wanted)}`);
  return names.map((name) => {
    if (!s.variants.some((v) => v.name === name)) {
      throw new UsageError(`--variants: unknown variant ${JSON.stringify(name)} (known: ${s.variants.map((v) => v.name).join(', ')})`);
    }
    return { name, scenario: resolveVariant(s, name) };
  });
}
