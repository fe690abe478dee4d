import { z } from 'zod';

/** The parts of a `stormlab.sweep/v1` file the report reads (see result-schema.ts for why). */
const num = z.number();
const value = z.union([z.number(), z.string(), z.boolean()]);

const figures = z.looseObject({
  amplification: num,
  goodput: num,
  successRate: num,
  p99Ms: num,
  wastedTokens: num,
  shed: num,
  recoveryMs: num.nullable(),
});

const point = z.looseObject({
  values: z.array(value),
  figures,
  metric: num.nullable(),
  pareto: z.boolean(),
  spread: z.looseObject({ metric: z.looseObject({ low: num, high: num }).nullable() }).optional(),
});

/** A cell not simulated, its values refused together (optional: older files have none). */
const refused = z.looseObject({ values: z.array(value), reason: z.string() });

const param = z.looseObject({ path: z.string().min(1), values: z.array(value).min(1) });

export const sweepFileSchema = z
  .looseObject({
    schema: z.literal('stormlab.sweep/v1'),
    scenario: z.string(),
    variant: z.string(),
    seed: num,
    seeds: z.array(num).min(1).optional(),
    params: z.array(param).min(1),
    metric: z.string().min(1),
    higherIsBetter: z.boolean(),
    points: z.array(point),
    refused: z.array(refused).optional(),
  })
  .superRefine((file, ctx) => {
    // Every point (and refused cell) must sit on the grid: the heatmap and the table place them by their values.
    for (const key of ['points', 'refused'] as const) {
      (file[key] ?? []).forEach((p, i) => {
        if (p.values.length !== file.params.length) {
          ctx.addIssue({
            code: 'custom',
            path: [key, i, 'values'],
            message: `expected ${file.params.length} values (one per param), got ${p.values.length}`,
            input: p.values,
          });
          return;
        }
        const off = p.values.findIndex((v, j) => !file.params[j].values.includes(v));
        if (off >= 0)
          ctx.addIssue({
            code: 'custom',
            path: [key, i, 'values', off],
            message: `expected one of the values of params[${off}] (${file.params[off].path}), got ${JSON.stringify(p.values[off])}`,
            input: p.values[off],
          });
      });
    }
  });
