import { readFileSync, statSync } from 'node:fs';
import { extname } from 'node:path';
import { resolveScenarioPath } from './bundled.js';
import { parseText, type TextFormat } from './parse-text.js';
import { ScenarioError } from './scenario-error.js';
import type { Scenario } from './scenario.js';
import { applyOverrides, parsePath, parseSetFlags, type LabelledOverride, type PathSegment } from './set-override.js';
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
  if (!r.ok) throw new ScenarioError(source, [...problems, ...r.problems.map((p) => blame(p, flags.overrides))]);
  problems.push(...variantProblems(r.scenario));
  if (problems.length > 0) throw new ScenarioError(source, problems);
  return r.scenario;
}

/**
 * A problem at a path a `--set` wrote (or inside it, or above it: `engine.budget: unknown key`
 * for `--set engine.budget.ratio=0.1`) is the flag's, not the file's: it is named after the
 * flag, `--set "engine.budget.ratio=0.1": engine.budget: unknown key`.
 */
function blame(problem: string, overrides: readonly LabelledOverride[]): string {
  const colon = problem.indexOf(': ');
  const at = colon > 0 ? parsePath(problem.slice(0, colon)) : undefined;
  if (at === undefined || !at.ok) return problem;
  for (let i = overrides.length - 1; i >= 0; i--) {
    const o = parsePath(overrides[i].path);
    if (o.ok && overrides[i].origin !== undefined && overlaps(o.segments, at.segments))
      return `${overrides[i].origin}: ${problem}`;
  }
  return problem;
}

/** Whether one path is a prefix of the other, `[*]` matching any index. */
function overlaps(a: readonly PathSegment[], b: readonly PathSegment[]): boolean {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if ('all' in x || 'all' in y) continue;
    if ('key' in x ? !('key' in y) || x.key !== y.key : !('index' in y) || x.index !== y.index) return false;
  }
  return true;
}

function readScenarioFile(arg: string): { text: string; format: TextFormat } {
  const file = resolveScenarioPath(arg);
  if (statSync(file).isDirectory()) throw new ScenarioError(arg, ['is a directory, expected a scenario file']);
  const format = FORMATS[extname(file).toLowerCase()];
  if (format === undefined)
    throw new ScenarioError(arg, [
      `expected a .yaml, .yml or .json file, got ${JSON.stringify(extname(file) || 'no extension')}`,
    ]);
  try {
    return { text: readFileSync(file, 'utf8'), format };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'file not found' : `cannot read it: ${(e as Error).message}`;
    throw new ScenarioError(arg, [why]);
  }
}
