import type { z } from 'zod';
import { issueLines } from './issues.js';
import { engineProblems } from './engine-problems.js';
import { referenceProblems } from './references.js';
import { sizeProblems } from './size-problems.js';
import { toolProblems } from './tool-schema.js';
import type { Scenario, Variant } from './scenario.js';
import { defaultVariants, scenarioSchema, variantsSchema, type ParsedScenario } from './schema.js';
import { fallbackErrorMap } from './schema-kit.js';

export type Validation = { ok: true; scenario: Scenario } | { ok: false; problems: string[] };

let schema: z.ZodType<ParsedScenario> | undefined;
let variants: z.ZodType<Variant[]> | undefined;

/**
 * Checks a raw scenario document (parsed YAML/JSON, overrides applied) and resolves it:
 * every problem, one line each with its path, or the `Scenario` with defaults filled in.
 * Variants are not checked here (see `variantProblems`).
 */
export function validateDocument(doc: unknown, source: string): Validation {
  schema ??= scenarioSchema();
  const r = schema.safeParse(doc, { error: fallbackErrorMap, reportInput: true });
  const problems = [...(r.success ? [] : issueLines(r.error.issues)), ...referenceProblems(doc), ...toolProblems(doc)];
  // Only once every field is valid alone: then the engine judges how they fit together.
  if (r.success && problems.length === 0)
    problems.push(
      ...engineProblems(r.data.traffic.engine, r.data.traffic.layers),
      ...sizeProblems(r.data.traffic.arrival, r.data.durationMs, r.data.traffic.layers),
    );
  if (!r.success || problems.length > 0) return { ok: false, problems };
  return { ok: true, scenario: resolve(r.data, doc, source) };
}

/**
 * The variants a raw document defines (`variants:`), or the default naive and engine when it
 * defines none — read alone, before the document is, since which variant runs decides which
 * document is validated. Problems come as the whole document's would: `variants.x[0]: …`.
 */
export function variantsOf(doc: unknown): { ok: true; variants: Variant[] } | { ok: false; problems: string[] } {
  const raw = typeof doc === 'object' && doc !== null ? (doc as { variants?: unknown }).variants : undefined;
  if (raw === undefined) return { ok: true, variants: defaultVariants() };
  variants ??= variantsSchema();
  const r = variants.safeParse(raw, { error: fallbackErrorMap, reportInput: true });
  if (!r.success)
    return { ok: false, problems: issueLines(r.error.issues.map((i) => ({ ...i, path: ['variants', ...i.path] }))) };
  return { ok: true, variants: r.data.length > 0 ? r.data : defaultVariants() };
}

function resolve(p: ParsedScenario, doc: unknown, source: string): Scenario {
  const layers = p.traffic.layers;
  const last = layers[layers.length - 1];
  // The last layer calls the first model unless it names its own (and its fallbacks).
  if (last.models === undefined) layers[layers.length - 1] = { ...last, models: [p.upstream.models[0].name] };
  return {
    name: p.name,
    description: p.description,
    seed: p.seed,
    durationMs: p.durationMs,
    drainMs: p.drainMs,
    traffic: p.traffic,
    upstream: p.upstream,
    variants: p.variants ?? defaultVariants(),
    expect: p.expect,
    live: p.live,
    ...(p.idempotency === undefined ? {} : { idempotency: p.idempotency }),
    source,
    document: doc,
  };
}
