import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUNDLED_DIR } from './bundled.js';
import type { EffectiveRun } from './scenario-request.js';

/**
 * A bundled scenario as the build resolved it (`scripts/compile-scenarios.mjs` writes one per
 * scenario next to the compiled code): the file's text it came from, and what
 * `resolveScenario` gives with no overrides for the scenario as written and for each variant.
 */
export interface CompiledScenario {
  text: string;
  asWritten: EffectiveRun;
  /** In the order the file defines them. */
  variants: EffectiveRun[];
}

/** `dist/scenario/compiled/`; absent when running from source, where nothing is compiled. */
export const COMPILED_DIR: string = fileURLToPath(new URL('./compiled/', import.meta.url));

/**
 * The bundled scenario `arg` names (a bare name), as the build resolved it — or undefined,
 * and the caller resolves it the ordinary way: when nothing was compiled, when the name is not
 * a bundled one, or when the file changed since the build. Loading this way needs neither the
 * YAML parser nor the schema, which are most of a short run's start-up.
 */
export function compiledScenario(
  arg: string,
  dir = COMPILED_DIR,
  bundledDir = BUNDLED_DIR,
): CompiledScenario | undefined {
  // A file of that name where the command runs would be what resolveScenario reads.
  if (!/^[\w-]+$/.test(arg) || existsSync(arg)) return undefined;
  let compiled: CompiledScenario;
  let text: string;
  try {
    compiled = fromCompiledJson(readFileSync(join(dir, `${arg}.json`), 'utf8'));
    text = readFileSync(join(bundledDir, `${arg}.yaml`), 'utf8');
  } catch {
    return undefined;
  }
  return compiled.text === text ? compiled : undefined;
}

/** The key that stands for a number JSON cannot hold (`Infinity` is the default of every timeout). */
const NUMBER = '~number';

/**
 * A compiled record as JSON, `Infinity`, `-Infinity` and `NaN` written as `{"~number": "Infinity"}`.
 * @public (used by scripts/compile-scenarios.mjs, on the compiled code)
 */
export function toCompiledJson(record: CompiledScenario): string {
  return JSON.stringify(record, (_, v: unknown) =>
    typeof v === 'number' && !Number.isFinite(v) ? { [NUMBER]: String(v) } : v,
  );
}

/** The record `toCompiledJson` wrote. @public (used by scripts/compile-scenarios.mjs) */
export function fromCompiledJson(json: string): CompiledScenario {
  return JSON.parse(json, (_, v: unknown) =>
    typeof v === 'object' && v !== null && NUMBER in v && Object.keys(v).length === 1
      ? Number((v as Record<string, string>)[NUMBER])
      : v,
  ) as CompiledScenario;
}
