import type { OverrideRecord } from '../run/metrics/result.js';
import { ScenarioError } from './scenario-error.js';
import type { Scenario } from './scenario.js';

/**
 * One override from the command line: `path=value` as `--set` takes it, and the flag it came
 * from (`--set`, `--duration`, `--seed`), which messages and the summary name.
 */
export interface CommandSet {
  text: string;
  from: string;
}

/**
 * Which documents a command runs: the scenario as written (absent), named variants in order,
 * every variant the scenario defines (`all`), or `{ prefer }`: that variant when the scenario
 * has it, else the scenario as written (what sweep and tune run by default).
 */
export type VariantChoice = readonly string[] | 'all' | { prefer: string };

/**
 * What a command asks the scenario layer for — everything that decides what runs. The answer
 * is one `EffectiveScenarios` or one `ScenarioError`; nothing else reads a scenario argument.
 */
export interface ScenarioRequest {
  /** A file path (relative to `cwd`) or a bundled scenario's name, as the user wrote it. */
  arg: string;
  cwd: string;
  variants?: VariantChoice;
  /** The command line's overrides, applied in order after the variant's: the command line wins. @default [] */
  set?: readonly CommandSet[];
  /** The flag the variant names came from (`--variant`, `--variants`), for messages. */
  flag?: string;
  /**
   * Also check what does not run — the scenario as written and every variant it defines — and
   * refuse it for a problem of the file's own (one the command line's overrides did not cause).
   * Commands do; the points of a sweep, checked before they run, do not. @default false
   */
  checkFile?: boolean;
}

/** One document that runs: a variant, or the scenario as written. */
export interface EffectiveRun {
  /** What the run is called in results: the variant's name, or the scenario's. */
  name: string;
  /** The variant, when one runs. */
  variant?: string;
  /** Resolved, with defaults; `scenario.document` is the document that runs. */
  scenario: Scenario;
  /** The fields the variant and the command line set, each once (see `OverrideRecord`). */
  overrides: OverrideRecord[];
}

export interface EffectiveScenarios {
  /** The runs asked for, in order. */
  runs: EffectiveRun[];
  /** Every variant the scenario defines (its own, or the default naive and engine). */
  variants: string[];
}

/**
 * The variant names `choice` picks from `known` (empty: the scenario as written), each checked
 * to exist; an unknown one is refused naming the known ones and the flag it came from.
 */
export function pickVariants(
  choice: VariantChoice | undefined,
  known: readonly string[],
  source: string,
  flag?: string,
): string[] {
  if (choice === undefined) return [];
  if (choice === 'all') return [...known];
  if ('prefer' in choice) return known.includes(choice.prefer) ? [choice.prefer] : [];
  for (const name of choice) {
    if (!known.includes(name))
      throw new ScenarioError(source, [
        `${flag ?? 'variants'}: unknown variant ${JSON.stringify(name)} (known: ${known.join(', ') || 'none'})`,
      ]);
  }
  return [...choice];
}
