import { isMapping } from './schema-kit.js';
import { stageProblems } from './stage-schema.js';

/**
 * The checks that need more than one field: names must be unique, models named by the last
 * layer or by faults must exist, only the last layer calls models. They read the raw document
 * (it may be invalid elsewhere: every problem is reported at once), skipping whatever is not
 * the right type, which the schema reports.
 */
export function referenceProblems(doc: unknown): string[] {
  if (!isMapping(doc)) return [];
  const upstream = isMapping(doc.upstream) ? doc.upstream : {};
  const models = listOf(upstream.models);
  const layers = listOf(doc.layers);
  const known = names(models);
  return [
    ...duplicates(models, 'upstream.models', 'model'),
    ...duplicates(layers, 'layers', 'layer'),
    ...layers.flatMap((layer, i) => layerModels(layer, i, layers.length, known)),
    ...stageProblems(doc, layers),
    ...listOf(upstream.faults).flatMap((f, i) =>
      isMapping(f) ? unknownModel(f.model, `upstream.faults[${i}].model`, known) : [],
    ),
    ...listOf(upstream.faults).flatMap((f, i) => prefillProblems(f, i, models, known)),
    ...targetProblems(doc, layers, known),
  ];
}

/**
 * `engine.targets` (and a layer's `retry.engine.targets`) set limits per model target: each
 * key must be a model the layer calls (the last layer's `models`, else the first upstream
 * model), or it would change nothing.
 */
function targetProblems(doc: Record<string, unknown>, layers: unknown[], known: string[]): string[] {
  const last = layers[layers.length - 1];
  const listed = isMapping(last) && Array.isArray(last.models) ? last.models : undefined;
  const called = (listed ?? known.slice(0, 1)).filter((m): m is string => typeof m === 'string');
  const streams = isMapping(last) && last.stream === true;
  const check = (targets: unknown, path: string): string[] => {
    if (!isMapping(targets)) return [];
    // Only stream limits can be set per target: on a layer that does not stream they would change nothing.
    if (!streams && Object.keys(targets).length > 0)
      return [`${path}: sets stream limits per model, but the last layer does not stream (set its stream: true)`];
    return Object.keys(targets).flatMap((m) =>
      called.includes(m)
        ? []
        : [
            `${path}.${m}: not a model the last layer calls (${called.length > 0 ? called.join(', ') : 'none'}${listed === undefined ? '; list them in its models:' : ''})`,
          ],
    );
  };
  const engine = isMapping(doc.engine) ? doc.engine : {};
  return [
    ...check(engine.targets, 'engine.targets'),
    ...layers.flatMap((l, i) => {
      const retry = isMapping(l) && isMapping(l.retry) ? l.retry : {};
      const own = isMapping(retry.engine) ? retry.engine : {};
      const tools = isMapping(l) ? listOf(l.tools) : [];
      return [
        ...check(own.targets, `layers[${i}].retry.engine.targets`),
        ...tools.flatMap((t, j) => {
          const tr = isMapping(t) && isMapping(t.retry) && isMapping(t.retry.engine) ? t.retry.engine : {};
          const at = `layers[${i}].tools[${j}].retry.engine.targets`;
          return tr.targets === undefined ? [] : [`${at}: a tool call has no model targets`];
        }),
      ];
    }),
  ];
}

/**
 * A `prefill-rejected` phase is the fault form of a model's `continuation: prefill`: it makes a
 * declaring model refuse prefills while it lasts. A model that does not declare it refuses every
 * prefill already, so a phase that hits none that does would change nothing: refused.
 */
function prefillProblems(f: unknown, i: number, models: unknown[], known: string[]): string[] {
  if (!isMapping(f) || f.kind !== 'prefill-rejected') return [];
  const declaring = names(models.filter((m) => isMapping(m) && m.continuation === 'prefill'));
  if (typeof f.model === 'string') {
    if (!known.includes(f.model) || declaring.includes(f.model)) return [];
    return [
      `upstream.faults[${i}]: prefill-rejected on model ${JSON.stringify(f.model)}, which does not declare continuation: prefill, so it rejects every prefill already (declare it, or drop the fault)`,
    ];
  }
  if (declaring.length > 0) return [];
  return [
    `upstream.faults[${i}]: prefill-rejected, but no model declares continuation: prefill, so every model rejects prefills already (declare it on a model, or drop the fault)`,
  ];
}

function listOf(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function names(items: unknown[]): string[] {
  return items.flatMap((m) => (isMapping(m) && typeof m.name === 'string' ? [m.name] : []));
}

function duplicates(items: unknown[], path: string, what: string): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  items.forEach((m, i) => {
    if (!isMapping(m) || typeof m.name !== 'string') return;
    if (seen.has(m.name)) out.push(`${path}[${i}].name: duplicate ${what} name ${JSON.stringify(m.name)}`);
    seen.add(m.name);
  });
  return out;
}

function layerModels(layer: unknown, i: number, count: number, known: string[]): string[] {
  if (isMapping(layer) && layer.stream === true && i < count - 1)
    return [
      `layers[${i}].stream: only the last layer calls models, so only it streams (this is layer ${i + 1} of ${count})`,
    ];
  if (!isMapping(layer) || layer.models === undefined) return [];
  if (i < count - 1)
    return [`layers[${i}].models: only the last layer calls models (this is layer ${i + 1} of ${count})`];
  return listOf(layer.models).flatMap((m, j) => unknownModel(m, `layers[${i}].models[${j}]`, known));
}

function unknownModel(name: unknown, path: string, known: string[]): string[] {
  if (typeof name !== 'string' || name === '' || known.includes(name)) return [];
  return [`${path}: unknown model ${JSON.stringify(name)} (known: ${known.length > 0 ? known.join(', ') : 'none'})`];
}
