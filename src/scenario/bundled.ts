import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ScenarioError } from './scenario-error.js';
import { closest } from './suggest.js';
import { yaml } from './yaml-module.js';

/** `scenarios/` at the package root: two levels up from both `src/scenario/` and `dist/scenario/`. */
export const BUNDLED_DIR: string = fileURLToPath(new URL('../../scenarios/', import.meta.url));

export interface BundledScenario {
  /** The bare name `resolveScenarioPath` takes, e.g. `retry-storm`. */
  name: string;
  /** Absolute path of the file. */
  file: string;
}

const EXTENSIONS = ['.yaml', '.yml', '.json'];

/** The scenario files in `dir`, by name (read from the folder only: finding one parses none). */
export function listBundledScenarios(dir: string = BUNDLED_DIR): BundledScenario[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => EXTENSIONS.includes(extname(f)))
    .sort()
    .map((f) => ({ name: basename(f, extname(f)), file: join(dir, f) }));
}

/** A scenario file's `description:` line ('' when it has none or does not parse). */
export function bundledDescription(file: string): string {
  try {
    const doc: unknown = yaml().parse(readFileSync(file, 'utf8'));
    const d = typeof doc === 'object' && doc !== null ? (doc as { description?: unknown }).description : undefined;
    return typeof d === 'string' ? d.split('\n')[0].trim() : '';
  } catch {
    return '';
  }
}

/**
 * A scenario argument as a file: an existing path as is, else a bare name of a bundled scenario
 * (`retry-storm`). Neither is a `ScenarioError` that lists the bundled names.
 */
export function resolveScenarioPath(arg: string, dir: string = BUNDLED_DIR): string {
  if (existsSync(arg)) return arg;
  const bundled = listBundledScenarios(dir);
  const bare = !/[\\/]/.test(arg) && !EXTENSIONS.includes(extname(arg));
  const found = bare ? bundled.find((b) => b.name === arg) : undefined;
  if (found !== undefined) return found.file;
  if (!bare) {
    // `scenarios/retry-storm.yaml` from the README, run where no such file is (a package
    // install): the bundled copy is there under its bare name.
    const same = bundled.find((b) => b.name === basename(arg, extname(arg)));
    const hint = same === undefined ? '' : `; the bundled scenario ${same.name} is: stormlab run ${same.name}`;
    throw new ScenarioError(arg, [`file not found${hint}`]);
  }
  const names = bundled.map((b) => b.name);
  const guess = closest(arg, names);
  const list = names.length > 0 ? names.join(', ') : 'none';
  throw new ScenarioError(arg, [
    `no such file or bundled scenario${guess === undefined ? '' : `; did you mean ${guess}?`} (bundled: ${list})`,
  ]);
}
