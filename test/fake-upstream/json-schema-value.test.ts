import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { valueForSchema } from '../../src/fake-upstream/json-schema-value.js';

const Order = z.object({
  id: z.string().uuid(),
  status: z.enum(['open', 'shipped']),
  total: z.number().min(0).max(500),
  count: z.number().int().min(1).max(9),
  when: z.string().datetime(),
  note: z.string().min(12).max(20).nullable(),
  items: z
    .array(z.object({ sku: z.string().max(8), qty: z.number().int().positive() }))
    .min(1)
    .max(4),
  tags: z.array(z.string()).optional(),
  meta: z.union([z.object({ kind: z.literal('gift') }), z.null()]),
  flag: z.boolean(),
});

describe('valueForSchema', () => {
  it('gives values a zod schema accepts, from its JSON Schema (enums, bounds, formats, nested, nullable, literals)', () => {
    const schema = z.toJSONSchema(Order);
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        expect(Order.safeParse(valueForSchema(schema, seed)).error).toBeUndefined();
      }),
      { numRuns: 200 },
    );
  });

  it('is deterministic per seed and varies across seeds', () => {
    const schema = z.toJSONSchema(Order);
    expect(valueForSchema(schema, 1)).toEqual(valueForSchema(schema, 1));
    const distinct = new Set(Array.from({ length: 20 }, (_, i) => JSON.stringify(valueForSchema(schema, i))));
    expect(distinct.size).toBeGreaterThan(1);
  });

  it('follows $ref into $defs and ends recursive schemas', () => {
    const schema = {
      $defs: {
        node: {
          type: 'object',
          properties: { name: { type: 'string' }, child: { $ref: '#/$defs/node' } },
          required: ['name'],
        },
      },
      $ref: '#/$defs/node',
    };
    const v = valueForSchema(schema, 3) as { name: string; child?: unknown };
    expect(typeof v.name).toBe('string');
    expect(JSON.stringify(v).length).toBeLessThan(10_000);
  });

  it('merges allOf, takes a type list, honours multipleOf, const and a required key without a schema', () => {
    expect(
      valueForSchema(
        {
          allOf: [
            { type: 'object', properties: { a: { type: 'integer', multipleOf: 5, minimum: 1, maximum: 20 } } },
            { properties: { b: { type: ['null', 'boolean'] }, c: { const: 'x' } }, required: ['d'] },
          ],
        },
        9,
      ),
    ).toMatchObject({ a: expect.any(Number), b: expect.any(Boolean), c: 'x', d: expect.any(String) });
    const a = (
      valueForSchema(
        { type: 'object', properties: { a: { type: 'integer', multipleOf: 5, minimum: 1, maximum: 20 } } },
        2,
      ) as { a: number }
    ).a;
    expect(a % 5).toBe(0);
  });

  it('takes anything that is not a schema without throwing', () => {
    for (const s of [null, 3, 'x', [], { type: 'nope' }, { $ref: '#/missing' }])
      expect(() => valueForSchema(s, 0)).not.toThrow();
  });
});

describe('valueForSchema with a pattern', () => {
  const Contact = z.object({
    phone: z.string().regex(/^\+1-\d{3}-\d{3}-\d{4}$/),
    sku: z.string().regex(/^[A-Z]{2,3}-[0-9a-f]{4}(-v\d+)?$/),
    code: z.string().regex(/^(?:red|green|blue)_[^\s,]{1,5}$/),
    ticket: z
      .string()
      .regex(/[A-Z]+-\d+/)
      .max(9),
    slug: z.string().regex(/^[\w.-]+$/),
    email: z.email(),
    id: z.uuid(),
  });

  it('gives strings the zod regexes accept, formats and length limits kept', () => {
    const schema = z.toJSONSchema(Contact);
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        expect(Contact.safeParse(valueForSchema(schema, seed)).error).toBeUndefined();
      }),
      { numRuns: 200 },
    );
  });

  it('keeps its own string for what it cannot write (a lookahead, a back-reference, an invalid pattern)', () => {
    for (const pattern of ['^(?=.*\\d)[a-z\\d]{8}$', '^(a)\\1$', '[unclosed'])
      expect(valueForSchema({ type: 'string', pattern }, 1)).toMatch(/^value-/);
  });

  it('draws the same string from the same seed, and different ones across seeds', () => {
    const schema = { type: 'string', pattern: '^[a-z]{6}$' };
    expect(valueForSchema(schema, 7)).toBe(valueForSchema(schema, 7));
    const seen = new Set(Array.from({ length: 20 }, (_, i) => valueForSchema(schema, i)));
    expect(seen.size).toBeGreaterThan(15);
  });
});
