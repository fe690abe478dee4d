import { ScenarioError } from './scenario-error.js';
import type { Scenario, Variant } from './scenario.js';
import { applyOverrides } from './set-override.js';
import { validateDocument } from './validate.js';

export { defaultVariants } from './schema.js';

/** The scenario with variant `name`'s overrides applied to its document, validated again. */
export function resolveVariant(scenario: Scenario, name: string): Scenario {
  const variant = scenario.variants.find((v) => v.name === name);
  if (variant === undefined) {
    const known = scenario.variants.map((v) => v.name).join(', ') || 'none';
    throw new ScenarioError(scenario.source, [`variants: unknown variant ${JSON.stringify(name)} (known: ${known})`]);
  }
  const r = tryVariant(scenario, variant);
  if (!r.ok) throw new ScenarioError(scenario.source, r.problems);
  return r.scenario;
}

/** Every variant's problems, each line prefixed `variants.<name>: `; none when all resolve. */
export function variantProblems(scenario: Scenario): string[] {
  return scenario.variants.flatMap((v) => {
    const r = tryVariant(scenario, v);
    return r.ok ? [] : r.problems;
  });
}

function tryVariant(
  scenario: Scenario,
  variant: Variant,
): { ok: true; scenario: Scenario } | { ok: false; problems: string[] } {
  const prefix = `variants.${variant.name}: `;
  const applied = applyOverrides(scenario.document, variant.set);
  if (applied.problems.length > 0) return { ok: false, problems: applied.problems.map((p) => prefix + p) };
  const r = validateDocument(applied.doc, `${scenario.source} (variant ${variant.name})`);
  return r.ok ? r : { ok: false, problems: r.problems.map((p) => prefix + p) };
}
