import { parseText } from './parse-text.js';
import { readScenarioFile } from './read-scenario-file.js';
import { resolveDocument } from './resolve-scenario.js';
import { ScenarioError } from './scenario-error.js';
import type { Scenario } from './scenario.js';

export interface LoadOptions {
  /** `--set path=value` flags, applied in order after the variant's overrides. @default [] */
  set?: readonly string[];
  /** The variant to resolve; none gives the scenario as written. */
  variant?: string;
  /** What to call inline text in messages. @default '<inline>' */
  source?: string;
}

/**
 * Loads a scenario from a file path, a bundled name (`retry-storm`) or inline text (anything
 * with a newline, or starting with `{`): the variant's overrides, then `--set` flags, applied
 * to its document; it and every variant validated, defaults filled in. Throws a
 * `ScenarioError` listing every problem found. (Commands resolve theirs with
 * `resolveScenario`, which this shares everything with but the reading.)
 */
export function loadScenario(pathOrText: string, options: LoadOptions = {}): Scenario {
  const inline = pathOrText.includes('\n') || pathOrText.trimStart().startsWith('{');
  const source = inline ? (options.source ?? '<inline>') : pathOrText;
  const raw = inline ? { text: pathOrText, format: 'yaml' as const } : readScenarioFile(pathOrText);
  const parsed = parseText(raw.text, raw.format);
  if (!parsed.ok) throw new ScenarioError(source, parsed.problems);
  return resolveDocument(parsed.doc, source, {
    set: (options.set ?? []).map((text) => ({ text, from: '--set' })),
    variants: options.variant === undefined ? undefined : [options.variant],
    checkFile: true,
  }).runs[0].scenario;
}
