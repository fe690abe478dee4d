import { hashSeed, SeededRandom } from '../engine/random.js';
import { isObject } from './dialect.js';
import { descriptionHints } from './description-hints.js';
import { sampleForPattern } from './pattern-sample.js';

type Schema = Record<string, unknown>;

/** Nesting past this gives the simplest value of the type: a recursive schema (`$ref` to itself) ends. */
const MAX_DEPTH = 8;
const WORDS = ['storm', 'budget', 'breaker', 'token', 'retry', 'layer', 'calm', 'upstream'];

/**
 * A value valid against a JSON Schema, the way tools and structured outputs are declared
 * (OpenAI `parameters` / `json_schema.schema`, Anthropic `input_schema`, what zod and the
 * frameworks emit): `type` (one or a list), `enum`, `const`, `anyOf`/`oneOf` (the first
 * non-null branch), `allOf` (merged), `$ref` into `$defs`/`definitions`, object `properties`
 * (every one given, required or not, so strict mode holds), `items`/`prefixItems` with
 * `minItems`/`maxItems`, number bounds and `multipleOf`, string `minLength`/`maxLength` and the
 * common `format`s, and `pattern` (see `sampleForPattern`; one it cannot write leaves the
 * usual string). Constraints a `description` states the way the Anthropic SDK writes them
 * (`{pattern: "…", minimum: 1}`, see `descriptionHints`) count as the schema's own, unless the
 * schema says otherwise. The same schema and seed give the same value.
 */
export function valueForSchema(schema: unknown, seed: string | number): unknown {
  const random = new SeededRandom(hashSeed(`${seed}`));
  const root = isObject(schema) ? schema : {};
  return new Generator(root, random).value(root, 0, '');
}

class Generator {
  constructor(
    private readonly root: Schema,
    private readonly random: SeededRandom,
  ) {}

  value(s: Schema, depth: number, key: string): unknown {
    const schema = withHints(this.resolve(s));
    if ('const' in schema) return schema.const;
    if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[this.pick(schema.enum.length)];
    const branches = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
    if (Array.isArray(branches) && branches.length > 0) {
      const real = branches.filter((b) => isObject(b) && b.type !== 'null');
      const branch = (real.length > 0 ? real : branches)[0];
      return this.value({ ...withoutKeys(schema, 'anyOf', 'oneOf'), ...(branch as Schema) }, depth, key);
    }
    if (Array.isArray(schema.allOf)) {
      const merged = schema.allOf.reduce<Schema>(
        (m, part) => mergeSchemas(m, this.resolve(part as Schema)),
        withoutKeys(schema, 'allOf'),
      );
      return this.value(merged, depth, key);
    }
    switch (typeOf(schema)) {
      case 'object':
        return this.object(schema, depth);
      case 'array':
        return this.array(schema, depth, key);
      case 'integer':
        return this.number(schema, true);
      case 'number':
        return this.number(schema, false);
      case 'boolean':
        return this.random.next() < 0.5;
      case 'null':
        return null;
      default:
        return this.string(schema, key);
    }
  }

  private object(schema: Schema, depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    if (depth >= MAX_DEPTH) return out;
    const props = isObject(schema.properties) ? schema.properties : {};
    const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
    for (const k of Object.keys(props)) out[k] = this.value(props[k] as Schema, depth + 1, k);
    // A required name with no declared schema still has to be there.
    for (const k of required) if (!(k in out)) out[k] = this.string({}, k);
    return out;
  }

  private array(schema: Schema, depth: number, key: string): unknown[] {
    const min = num(schema.minItems) ?? 0;
    const max = num(schema.maxItems) ?? Math.max(min, 3);
    const prefix = Array.isArray(schema.prefixItems) ? (schema.prefixItems as Schema[]) : [];
    if (depth >= MAX_DEPTH) return [];
    const n = Math.max(min, prefix.length, Math.min(max, min + 1 + this.pick(2)));
    const items = isObject(schema.items) ? schema.items : {};
    return Array.from({ length: Math.min(n, Math.max(max, prefix.length)) }, (_, i) =>
      this.value(prefix[i] ?? items, depth + 1, key),
    );
  }

  private number(schema: Schema, integer: boolean): number {
    const exMin = num(schema.exclusiveMinimum);
    const exMax = num(schema.exclusiveMaximum);
    let lo = num(schema.minimum) ?? (exMin !== undefined ? exMin + (integer ? 1 : 1e-6) : undefined);
    let hi = num(schema.maximum) ?? (exMax !== undefined ? exMax - (integer ? 1 : 1e-6) : undefined);
    lo ??= hi !== undefined ? Math.min(0, hi) : 0;
    hi ??= lo + 100;
    // A bound that only says "a safe integer" (zod's `int()`: ±2^53−1) is no range to draw from.
    if (hi - lo > WIDE_RANGE) {
      lo = Math.min(Math.max(0, lo), hi);
      hi = Math.min(hi, lo + 100);
    }
    if (integer) {
      lo = Math.ceil(lo);
      hi = Math.floor(hi);
    }
    const step = num(schema.multipleOf);
    if (step !== undefined && step > 0) {
      const first = Math.ceil(lo / step);
      const last = Math.floor(hi / step);
      return last >= first ? (first + this.pick(last - first + 1)) * step : lo;
    }
    if (hi <= lo) return lo;
    if (integer) return lo + this.pick(hi - lo + 1);
    const x = lo + this.random.next() * (hi - lo);
    // Two decimals, unless rounding leaves the range (an exclusive bound a hair away).
    const rounded = Math.round(x * 100) / 100;
    return rounded >= lo && rounded <= hi ? rounded : x;
  }

  private string(schema: Schema, key: string): string {
    const fixed = FORMATS[String(schema.format)];
    let s = fixed ?? `${key === '' ? 'value' : key}-${WORDS[this.pick(WORDS.length)]}`;
    const min = num(schema.minLength) ?? 0;
    const max = num(schema.maxLength);
    // A format's value usually matches its pattern too (zod writes both); a pattern alone gets a string drawn for it.
    if (typeof schema.pattern === 'string' && (fixed === undefined || !matches(schema.pattern, fixed))) {
      const fits = (v: string) => v.length >= min && (max === undefined || v.length <= max);
      const matching = sampleForPattern(schema.pattern, this.random, fits);
      if (matching !== undefined) return matching;
    }
    while (s.length < min) s += 'x';
    if (max !== undefined && s.length > max) s = s.slice(0, max);
    return s;
  }

  private pick(n: number): number {
    return Math.floor(this.random.next() * n);
  }

  /** Follows local `$ref`s (`#/$defs/X`, `#/definitions/X`, `#`); an unresolvable one is any value. */
  private resolve(s: Schema, seen = 0): Schema {
    const ref = s.$ref;
    if (typeof ref !== 'string' || seen > 32) return s;
    let target: unknown = this.root;
    if (ref !== '#') {
      for (const part of ref.replace(/^#\//, '').split('/')) {
        target = isObject(target) ? target[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
      }
    }
    return isObject(target) ? this.resolve({ ...withoutKeys(s, '$ref'), ...target }, seen + 1) : {};
  }
}

/** Past this span a number's range is drawn from its part nearest 0 (100 wide). */
const WIDE_RANGE = 1e6;

/** `s` with the constraints its description states, where `s` does not state them itself. */
function withHints(s: Schema): Schema {
  const hints = descriptionHints(s.description);
  return hints === undefined ? s : { ...hints, ...s };
}

const FORMATS: Record<string, string> = {
  'date-time': '2026-01-01T00:00:00Z',
  date: '2026-01-01',
  time: '00:00:00Z',
  email: 'user@example.com',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  uuid: '00000000-0000-4000-8000-000000000000',
  hostname: 'example.com',
  ipv4: '127.0.0.1',
  ipv6: '2001:db8::1',
  duration: 'P1D',
};

function matches(pattern: string, value: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(value);
  } catch {
    return false;
  }
}

function typeOf(s: Schema): string {
  const t = s.type;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) return (t.find((x) => x !== 'null') as string | undefined) ?? 'null';
  if (isObject(s.properties)) return 'object';
  if (s.items !== undefined) return 'array';
  return 'string';
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

function withoutKeys(s: Schema, ...keys: string[]): Schema {
  const out = { ...s };
  for (const k of keys) delete out[k];
  return out;
}

function mergeSchemas(a: Schema, b: Schema): Schema {
  const out: Schema = { ...a, ...b };
  if (isObject(a.properties) || isObject(b.properties))
    out.properties = {
      ...(isObject(a.properties) ? a.properties : {}),
      ...(isObject(b.properties) ? b.properties : {}),
    };
  if (Array.isArray(a.required) || Array.isArray(b.required))
    out.required = [...(Array.isArray(a.required) ? a.required : []), ...(Array.isArray(b.required) ? b.required : [])];
  return out;
}
