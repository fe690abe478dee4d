import { z } from 'zod';
import { inRange, type Range, rangeText } from '../engine/options.js';
import { NO_CONTROL_CHARS } from './control-chars.js';
import { durationRangeText, parseDuration } from './duration.js';
import { didYouMean } from './suggest.js';

/**
 * Building blocks of the scenario schema. Every schema here carries its own message in the
 * one style the user sees — `expected <what>, got <value>` or `missing, expected <what>` — so
 * zod's default wording never reaches the user; `issueLines` only adds the path.
 */

/** A value as a message shows it: strings quoted, collections by kind. */
export function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object' && value !== null) return 'a mapping';
  return String(value);
}

export function expectedMessage(what: string, input: unknown): string {
  return input === undefined ? `missing, expected ${what}` : `expected ${what}, got ${show(input)}`;
}

/** A zod error map giving `expected <what>, got <input>`. */
export function expecting(what: string): z.core.$ZodErrorMap {
  return (iss) => expectedMessage(what, iss.input);
}

export function oneOfMessage(values: readonly string[], input: unknown): string {
  const hint = typeof input === 'string' ? didYouMean(input, values) : '';
  return `${expectedMessage(`one of ${values.join(', ')}`, input)}${hint}`;
}

/**
 * The map for issues no schema gave a message to: unknown keys (one line per key, each with
 * the closest known key — `issueLines` splits them), tags no variant of a tagged union has,
 * and a neutral fallback.
 */
export const fallbackErrorMap: z.core.$ZodErrorMap = (iss) => {
  if (iss.code === 'unrecognized_keys') {
    const shape = (iss.inst as { _zod?: { def?: { shape?: object } } } | undefined)?._zod?.def?.shape ?? {};
    return iss.keys.map((k) => didYouMean(k, Object.keys(shape))).join('\n');
  }
  if (iss.code === 'invalid_union' && 'discriminator' in iss && typeof iss.discriminator === 'string') {
    const options = ((iss as { options?: unknown[] }).options ?? []).map(String);
    return oneOfMessage(options, (iss.input as Record<string, unknown>)[iss.discriminator]);
  }
  if (iss.code === 'invalid_type') return expectedMessage(`a value of type ${iss.expected}`, iss.input);
  return expectedMessage('a valid value', iss.input);
};

/**
 * A finite number passing `ok`, described by `what` ('a positive integer'). `json` is how the
 * JSON Schema states the same range (`{type: 'integer', minimum: 1}`): the check is code, so
 * say it there too, or editors accept what the loader refuses.
 */
export function num(what: string, ok: (n: number) => boolean = () => true, json?: Record<string, unknown>) {
  const error = expecting(what);
  const n = z.number({ error }).refine(ok, { error });
  return json === undefined ? n : n.meta(json);
}

/** An integer from `lo` to `hi`, in the schema and in words. */
export const intBetween = (lo: number, hi: number) =>
  num(`an integer from ${lo} to ${hi}`, (n) => Number.isInteger(n) && n >= lo && n <= hi, {
    type: 'integer',
    minimum: lo,
    maximum: hi,
  });

/** How the JSON Schema says a range (the checks are code here). */
export function rangeJson(range: Range): Record<string, number> {
  const out: Record<string, number> = range.above ? { exclusiveMinimum: range.min } : { minimum: range.min };
  if (range.max !== undefined && range.max !== Infinity) out.maximum = range.max;
  return out;
}

/**
 * A number in one of the engine's option ranges (`RETRY_BUDGET_RANGES.ratio`): the same range
 * the engine's constructor checks, in the same words, so the two cannot drift apart.
 */
export function inRangeOf(range: Range) {
  return num(rangeText(range), (n) => inRange(range, n)).meta({
    type: range.integer ? 'integer' : 'number',
    ...rangeJson(range),
  });
}

export const positiveInt = () =>
  num('a positive integer', (n) => Number.isInteger(n) && n > 0, { type: 'integer', minimum: 1 });
export const nonNegativeInt = () =>
  num('an integer >= 0', (n) => Number.isInteger(n) && n >= 0, { type: 'integer', minimum: 0 });
export const positive = () => num('a positive number', (n) => n > 0, { exclusiveMinimum: 0 });
export const nonNegative = () => num('a number >= 0', (n) => n >= 0, { minimum: 0 });
export const ratio = () => num('a number from 0 to 1', (n) => n >= 0 && n <= 1, { minimum: 0, maximum: 1 });
export const httpStatus = () =>
  num('an HTTP status from 100 to 599', (n) => Number.isInteger(n) && n >= 100 && n <= 599, {
    type: 'integer',
    minimum: 100,
    maximum: 599,
  });

export const text = (what = 'a non-empty string') =>
  z.string({ error: expecting(what) }).min(1, { error: expecting(what) });

/**
 * A name (of the scenario, a layer, model, tool, tenant, stage, variant, limit, or a reference
 * to one): non-empty text without control characters, which would reach the terminal raw
 * wherever the name is printed.
 */
export const name = (what: string) =>
  text(what).regex(NO_CONTROL_CHARS, {
    error: (iss) => `expected ${what} without control characters, got ${show(iss.input)}`,
  });
export const bool = () => z.boolean({ error: expecting('true or false') });

export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: (iss) => oneOfMessage(values, iss.input) });
}

export const DURATION_HINT = 'a duration like 30s or 500ms';

/** How the JSON Schema (scenario.schema.json) describes a duration: the checks are code here. */
const DURATION_JSON = {
  description: 'a duration: ms as a number, or a string with units ms, s, m, h (500ms, 2s, 1m30s)',
  anyOf: [
    { type: 'number', minimum: 0 },
    { type: 'string', pattern: '^\\s*((\\d+(\\.\\d*)?|\\.\\d+)(ms|s|m|h))+\\s*$|^\\s*(\\d+(\\.\\d*)?|\\.\\d+)\\s*$' },
  ],
};

/** A duration in ms from a number (ms) or a string with units; `positive` refuses 0. */
export function duration(opts: { positive?: boolean } = {}) {
  return durationIn(opts.positive ? { min: 0, above: true } : { min: 0 });
}

/** A duration in ms (a number of ms or a string with units) in `range`: an engine option's, say. */
export function durationIn(range: Range) {
  return z
    .unknown()
    .transform((v, ctx): number => {
      const ms = parseDuration(v);
      if (ms !== undefined && inRange(range, ms)) return ms;
      const what = ms === undefined ? DURATION_HINT : durationRangeText(range);
      ctx.issues.push({ code: 'custom', message: expectedMessage(what, v), input: v });
      return z.NEVER;
    })
    .meta({
      ...DURATION_JSON,
      // As a number (ms) the range is the schema's to state; as text, its units are read here.
      anyOf: [{ type: 'number', ...rangeJson(range) }, DURATION_JSON.anyOf[1]],
    });
}

/** A mapping with exactly these keys; others are reported as unknown, with a suggestion. */
export function obj<S extends z.core.$ZodLooseShape>(shape: S, what = 'a mapping') {
  return z.strictObject(shape, {
    error: (iss) => (iss.code === 'unrecognized_keys' ? undefined : expectedMessage(what, iss.input)),
  });
}

export function isMapping(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A value whose schema depends on its shape (a number or a `{dist: ...}` mapping; options or
 * `false`). A plain `z.union` would report every branch's complaints; this reports only the
 * complaints of the branch the value was evidently meant for, or `expected <what>` if none.
 */
export function switchOn<T>(
  what: string,
  pick: (v: unknown) => z.ZodType<T> | undefined,
  json: Record<string, unknown> = {},
) {
  // The JSON Schema cannot follow `pick`: it says in words what the value may be, and `json`
  // what a caller knows of its shape.
  return z
    .unknown()
    .meta({ description: what, ...json })
    .transform((v, ctx): T => {
      const schema = pick(v);
      if (schema === undefined) {
        ctx.issues.push({ code: 'custom', message: expectedMessage(what, v), input: v });
        return z.NEVER;
      }
      const r = schema.safeParse(v, { error: fallbackErrorMap, reportInput: true });
      if (r.success) return r.data;
      // Already finalised (message and relative path set); the outer parse prefixes the path.
      for (const iss of r.error.issues) ctx.issues.push(iss as unknown as z.core.$ZodRawIssue);
      return z.NEVER;
    });
}

/**
 * How the JSON Schema states `schema` (its input side), to give a `switchOn` what its branches
 * accept: the checks that are code (a refinement across fields) are left out, the rest kept.
 */
export function jsonOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  return json;
}

/**
 * Engine options or `false` (off); `true` means "on, with the defaults", so
 * `--set engine.breaker=true` turns a breaker back on.
 */
export function orFalse<T>(schema: z.ZodType<T>, what: string) {
  // Editors (and the option-walk test) see the mapping's own fields, not only the words.
  const mapping = jsonOf(schema);
  return switchOn<T | false>(
    `${what}, true or false`,
    (v) => {
      if (v === false) return z.literal(false);
      if (v === true) return z.literal(true).transform(() => ({}) as T);
      return isMapping(v) ? schema : undefined;
    },
    { anyOf: [{ type: 'boolean' }, mapping] },
  );
}

/** A tagged union (`type:`, `dist:`, `kind:`): an unknown tag reads `expected one of ...`. */
export function tagged<
  const Types extends readonly [z.core.$ZodTypeDiscriminable, ...z.core.$ZodTypeDiscriminable[]],
  Disc extends string,
>(tag: Disc, options: Types, what = 'a mapping') {
  // The union raises `invalid_type` for a non-mapping, though its params' type only names union issues.
  const error: z.core.$ZodErrorMap = (iss) =>
    iss.code === 'invalid_type' ? expectedMessage(what, iss.input) : undefined;
  return z.discriminatedUnion(tag, options, { error } as z.core.$ZodDiscriminatedUnionParams);
}
