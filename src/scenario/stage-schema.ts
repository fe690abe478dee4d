import { z } from 'zod';
import { duration, expecting, isMapping, name } from './schema-kit.js';

/** `stages: {model: 15s, retrieval: 5s}`: stage names to budgets (positive durations, ms). */
export const stagesSchema = () =>
  z
    .record(name('a stage name'), duration({ positive: true }), {
      error: expecting('a mapping of stage names to budgets like {model: 15s, tools: 10s}'),
    })
    .refine((r) => Object.keys(r).length > 0, { error: 'expected at least one stage' });

/** The checks that need the whole document: a layer's or tool call's `stage` names a stage, `partial` needs one. */
export function stageProblems(doc: Record<string, unknown>, layers: unknown[]): string[] {
  const known = isMapping(doc.stages) ? Object.keys(doc.stages) : [];
  const unknown = (path: string, stage: unknown): string[] =>
    typeof stage === 'string' && stage !== '' && !known.includes(stage)
      ? [
          `${path}.stage: unknown stage ${JSON.stringify(stage)} (known: ${known.length > 0 ? known.join(', ') : 'none; add stages: {name: budget}'})`,
        ]
      : [];
  return layers.flatMap((layer, i) => {
    if (!isMapping(layer)) return [];
    const tools = Array.isArray(layer.tools) ? layer.tools : [];
    const own = tools.flatMap((t, j) => (isMapping(t) ? unknown(`layers[${i}].tools[${j}]`, t.stage) : []));
    const mine = unknown(`layers[${i}]`, layer.stage);
    if (mine.length > 0) return [...mine, ...own];
    if (layer.partial !== undefined && layer.stage === undefined)
      return [`layers[${i}].partial: only a layer with a stage runs out of budget; add stage: <name>`, ...own];
    return own;
  });
}
