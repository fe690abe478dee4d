import { readFileSync, statSync } from 'node:fs';
import { extname } from 'node:path';
import { resolveScenarioPath } from './bundled.js';
import { parseText, type TextFormat } from './parse-text.js';
import { ScenarioError } from './scenario-error.js';
import type { Scenario } from './scenario.js';
import { applyOverrides, parseSetFlags } from './set-override.js';
import { validateDocument } from './validate.js';
import { variantProblems } from './variants.js';

export interface LoadOptions {
  /** `--set path=value` flags, applied in order to the document before validation. @default [] */
  set?: readonly string[];
  /** What to call inline text in messages. @default '<inline>' */
  source?: string;
}

const FORMATS: Record<string, TextFormat> = { '.json': 'json', '.yaml': 'yaml', '.yml': 'yaml' };

/**
 * Loads a scenario from a file path, a bundled name (`retry-storm`) or inline text (anything
 * with a newline, or starting with `{`), applies `--set` flags, validates it and its variants,
 * and fills in defaults. Throws a `ScenarioError` listing every problem found.
 */
export function loadScenario(pathOrText: string, options: LoadOptions = {}): Scenario {
  const inline = pathOrText.includes('\n') || pathOrText.trimStart().startsWith('{');
  const source = inline ? (options.source ?? '<inline>') : pathOrText;
  const raw = inline ? { text: pathOrText, format: 'yaml' as const } : readScenarioFile(pathOrText);
  const parsed = parseText(raw.text, raw.format);
  if (!parsed.ok) throw new ScenarioError(source, parsed.problems);

  const flags = parseSetFlags(options.set ?? []);
  const applied = applyOverrides(parsed.doc, flags.overrides);
  const problems = [...flags.problems, ...applied.problems];
  const r = validateDocument(applied.doc, source);
  if (!r.ok) throw new ScenarioError(source, [...problems, ...r.problems]);
  problems.push(...variantProblems(r.scenario));
  if (problems.length > 0) throw new ScenarioError(source, problems);
  return r.scenario;
}

function readScenarioFile(arg: string): { text: string; format: TextFormat } {
  const file = resolveScenarioPath(arg);
  if (statSync(file).isDirectory()) throw new ScenarioError(arg, ['is a directory, expected a scenario file']);
  const format = FORMATS[extname(file).toLowerCase()];
  if (format === undefined) throw new ScenarioError(arg, [`expected a .yaml, .yml or .json file, got ${JSON.stringify(extname(file) || 'no extension')}`]);
  try {
    return { text: readFileSync(file, 'utf8'), format };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'file not found' : `cannot read it: ${(e as Error).message}`;
    throw new ScenarioError(arg, [why]);
  }
}
