import { statSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { BUNDLED_DIR, resolveScenarioPath } from './bundled.js';
import type { TextFormat } from './parse-text.js';
import { readBoundedFile, SCENARIO_MAX_BYTES, UnreadableFile } from './read-bounded-file.js';
import { ScenarioError } from './scenario-error.js';

const FORMATS: Record<string, TextFormat> = { '.json': 'json', '.yaml': 'yaml', '.yml': 'yaml' };

/**
 * The text of the scenario a command line names: a file path (relative to `cwd`) or a bundled
 * scenario's name. Problems name the argument as the user wrote it, not its absolute path.
 */
export function readScenarioArg(arg: string, cwd: string): { text: string; format: TextFormat } {
  const path = arg.includes('/') || arg.includes('.') ? resolve(cwd, arg) : arg;
  try {
    return readScenarioFile(resolveScenarioPath(path, BUNDLED_DIR));
  } catch (e) {
    if (e instanceof ScenarioError && e.source !== arg) throw new ScenarioError(arg, e.problems);
    throw e;
  }
}

/** A scenario file's text and format (by its extension); a directory, another extension or an unreadable file is a `ScenarioError`. */
export function readScenarioFile(arg: string): { text: string; format: TextFormat } {
  const file = resolveScenarioPath(arg);
  if (isDirectory(file)) throw new ScenarioError(arg, ['is a directory, expected a scenario file']);
  const format = FORMATS[extname(file).toLowerCase()];
  if (format === undefined)
    throw new ScenarioError(arg, [
      `expected a .yaml, .yml or .json file, got ${JSON.stringify(extname(file) || 'no extension')}`,
    ]);
  try {
    return { text: readBoundedFile(file, SCENARIO_MAX_BYTES), format };
  } catch (e) {
    if (!(e instanceof UnreadableFile)) throw e;
    const why = e.code === 'ENOENT' ? 'file not found' : e.code === undefined ? e.why : `cannot read it: ${e.message}`;
    throw new ScenarioError(arg, [why]);
  }
}

function isDirectory(file: string): boolean {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false;
  }
}
