import { z } from 'zod';
import { duration, expecting, isMapping } from './schema-kit.js';

/** `stages: {model: 15s, retrieval: 5s}`: stage names to budgets (positive durations, ms). */
export const stagesSchema = () =>
  z
    .record(z.string().min(1, { error: 'expected a non-empty stage name' }), duration({ positive: true }), {
      error: expecting('a mapping of stage names to budgets like {model: 15s, tools: 10s}'),
    })
    .refine((r) => Object.keys(r).length > 0, { error: 'expected at least one stage' });

/** The checks that need the whole document: a layer's `stage` names a stage, `partial` needs one. */
export function stageProblems(doc: Record<string, unknown>, layers: unknown[]): string[] {
  const known = isMapping(doc.stages) ? Object.keys(doc.stages) : [];
  return layers.flatMap((layer, i) => {
    if (!isMapping(layer)) return [];
    if (typeof layer.stage === 'string' && layer.stage !== '' && !known.includes(layer.stage))
      return [
        `layers[${i}].stage: unknown stage ${JSON.stringify(layer.stage)} (known: ${known.length > 0 ? known.join(', ') : 'none; add stages: {name: budget}'})`,
      ];
    if (layer.partial !== undefined && layer.stage === undefined)
      return [`layers[${i}].partial: only a layer with a stage runs out of budget; add stage: <name>`];
    return [];
  });
}
