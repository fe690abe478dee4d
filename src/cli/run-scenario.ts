import { compiledScenario, compiledVariant } from '../scenario/compiled-scenarios.js';
import type { Scenario } from '../scenario/scenario.js';
import { UsageError } from './io.js';
import type { ScenarioFlags } from './scenario-args.js';

// `run` and `compare` load their scenario through here. A bundled scenario run as written (no
// --set, --duration or --seed) comes as the build validated it; anything else loads through
// scenario-args, and only then are the YAML parser and the schema loaded. The answer is the
// same either way; only the start-up differs.

/** The scenario `run` or `compare` names, with --set, --duration and --seed applied. */
export async function loadRunScenario(arg: string, flags: ScenarioFlags, cwd: string): Promise<Scenario> {
  const asWritten = (flags.set ?? []).length === 0 && flags.duration === undefined && flags.seed === undefined;
  const compiled = asWritten ? compiledScenario(arg) : undefined;
  if (compiled !== undefined) return compiled;
  const { scenarioFromFlags } = await import('./scenario-args.js');
  return scenarioFromFlags(arg, flags, cwd);
}

/** `pickVariants` (scenario-args), from what the build resolved when it can. */
export async function loadRunVariants(
  s: Scenario,
  wanted: string | undefined,
  flag = '--variants',
): Promise<Array<{ name: string; scenario: Scenario }>> {
  const runs = variantNames(s, wanted, flag).map((name) => ({ name, scenario: compiledVariant(s, name) }));
  if (runs.every((r) => r.scenario !== undefined)) return runs as Array<{ name: string; scenario: Scenario }>;
  const { pickVariants } = await import('./scenario-args.js');
  return pickVariants(s, wanted, flag);
}

/**
 * The variant names a compare runs: those asked for, in order, or all the scenario has, each
 * checked to exist. `flag` is the option they came from (`--variants`, or `--variant` for
 * run), for messages.
 */
export function variantNames(s: Scenario, wanted: string | undefined, flag: string): string[] {
  const names =
    wanted === undefined
      ? s.variants.map((v) => v.name)
      : wanted
          .split(',')
          .map((v) => v.trim())
          .filter(Boolean);
  if (names.length === 0)
    throw new UsageError(`${flag}: expected a comma-separated list of variant names, got ${JSON.stringify(wanted)}`);
  for (const name of names) {
    if (!s.variants.some((v) => v.name === name)) {
      throw new UsageError(
        `${flag}: unknown variant ${JSON.stringify(name)} (known: ${s.variants.map((v) => v.name).join(', ')})`,
      );
    }
  }
  return names;
}
