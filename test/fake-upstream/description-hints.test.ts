import { zodOutputFormat } from '@anthropic-ai/sdk/helpers/zod';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { descriptionHints } from '../../src/fake-upstream/description-hints.js';
import { valueForSchema } from '../../src/fake-upstream/json-schema-value.js';

const KEYS = ['pattern', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'multipleOf', 'minLength', 'maxItems'];

/** A description as the Anthropic SDK writes one (`transformJSONSchema`). */
const sdkText = (hints: Record<string, unknown>, own?: string) =>
  `${own === undefined ? '' : `${own}\n\n`}{${Object.entries(hints)
    .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
    .join(', ')}}`;

const Order = z.object({
  code: z.string().regex(/^[A-Z]{2}\d{3}$/),
  total: z.number().min(1).max(500),
  count: z.number().int().gt(0).lt(10),
  any: z.number().int(),
  note: z.string().min(12).max(20).describe('what the buyer said, {if anything}'),
  id: z.cuid2(),
  tags: z.array(z.string().length(3)).min(2).max(5),
  when: z.iso.datetime(),
});

describe('constraint hints in descriptions (the Anthropic SDK form)', () => {
  it('values for a zodOutputFormat schema pass the original zod schema', () => {
    const schema = zodOutputFormat(Order).schema;
    expect(JSON.stringify(schema)).not.toContain('"minLength"');
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        expect(Order.safeParse(valueForSchema(schema, seed)).error).toBeUndefined();
      }),
      { numRuns: 200 },
    );
  });

  it('reads back every value the SDK writes, after the field own description or alone', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom(...KEYS), fc.jsonValue(), { minKeys: 1 }),
        fc.option(fc.string(), { nil: undefined }),
        (hints, own) => {
          const expected = JSON.parse(JSON.stringify(hints));
          expect(descriptionHints(sdkText(hints, own))).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('any other text is no hint and never throws; keywords it does not draw for are left out', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        const h = descriptionHints(text);
        expect(h === undefined || typeof h === 'object').toBe(true);
      }),
      { numRuns: 500 },
    );
    for (const text of [
      'Use {braces} freely',
      '{pattern: "x"} and more',
      '{pattern: "x", }',
      '{pattern: "x" maxLength: 3}',
      '{pattern: "unclosed}',
      '{}',
      '{"pattern": "x"}',
      '{ pattern: "x"}',
    ])
      expect(descriptionHints(text), text).toBeUndefined();
    expect(descriptionHints('{title: "t", maxLength: 3}')).toEqual({ maxLength: 3 });
    expect(descriptionHints('a\n\n{pattern: "^a, b}$", maxLength: 9}')).toEqual({ pattern: '^a, b}$', maxLength: 9 });
  });

  it('the schema own keywords win over a hint', () => {
    const schema = { type: 'integer', minimum: 50, maximum: 60, description: '{minimum: 0, maximum: 5}' };
    for (let seed = 0; seed < 20; seed++) expect(valueForSchema(schema, seed)).toBeGreaterThanOrEqual(50);
  });
});
