import { z } from 'zod';
import type { Dist } from '../upstream/distribution.js';
import { formatDuration } from './duration.js';
import {
  duration,
  expecting,
  isMapping,
  jsonOf,
  nonNegative,
  obj,
  tagged,
  positive,
  positiveInt,
  switchOn,
} from './schema-kit.js';

/**
 * What a distribution measures, which decides what its numbers may be:
 * - `time`: ms; every number may also be a duration string (`300ms`, `2s`);
 * - `count`: tokens, numbers >= 0;
 * - `fanout`: children per call. A plain number or a `choice` value must be a positive
 *   integer; other distributions are continuous (or, `poisson`, may draw 0), so the fan-out
 *   interpreter rounds their draws up to at least 1 (`TreeShape.fanout`), and here they need
 *   only be positive.
 * `poisson` is for counts and fan-outs only (whole numbers), not times.
 */
export type DistKind = 'time' | 'count' | 'fanout';

function scalar(kind: DistKind): z.ZodType<number> {
  if (kind === 'time') return duration();
  return kind === 'count' ? nonNegative() : positiveInt();
}

/** A parameter of a `{dist: ...}` mapping. */
function param(kind: DistKind, strictlyPositive = false): z.ZodType<number> {
  if (kind === 'time') return duration({ positive: strictlyPositive });
  return kind === 'fanout' || strictlyPositive ? positive() : nonNegative();
}

/** `max` must not be below `min`, `p99` not below `median`: report it on the larger one. */
function ordered<T extends Record<string, unknown>>(low: keyof T & string, high: keyof T & string, kind: DistKind) {
  // A time is said as a scenario writes one (2s), not in raw ms.
  const say = (n: number): string => (kind === 'time' ? formatDuration(n) : String(n));
  return (v: T, ctx: z.core.$RefinementCtx<T>) => {
    if ((v[high] as number) < (v[low] as number)) {
      ctx.addIssue({
        code: 'custom',
        path: [high],
        input: v[high],
        message: `expected at least ${low} (${say(v[low] as number)}), got ${say(v[high] as number)}`,
      });
    }
  };
}

function choice(kind: DistKind) {
  const weights = z.array(nonNegative(), { error: expecting('a list of weights') });
  return obj({
    dist: z.literal('choice'),
    values: z
      .array(scalar(kind), { error: expecting('a list of values') })
      .min(1, { error: 'expected at least one value' }),
    weights: weights.optional(),
  }).superRefine((v, ctx) => {
    if (v.weights === undefined) return;
    if (v.weights.length !== v.values.length) {
      ctx.addIssue({
        code: 'custom',
        path: ['weights'],
        input: v.weights,
        message: `expected ${v.values.length} weights (one per value), got ${v.weights.length}`,
      });
    } else if (!(v.weights.reduce((a, b) => a + b, 0) > 0)) {
      ctx.addIssue({
        code: 'custom',
        path: ['weights'],
        input: v.weights,
        message: 'expected weights adding up to more than 0',
      });
    }
  });
}

function distMapping(kind: DistKind): z.ZodType<Dist> {
  return tagged('dist', [
    obj({ dist: z.literal('const'), value: kind === 'fanout' ? positiveInt() : param(kind) }),
    obj({ dist: z.literal('uniform'), min: param(kind), max: param(kind) }).superRefine(ordered('min', 'max', kind)),
    obj({ dist: z.literal('exponential'), mean: param(kind, true) }),
    obj({ dist: z.literal('lognormal'), median: param(kind, true), p99: param(kind, true) }).superRefine(
      ordered('median', 'p99', kind),
    ),
    choice(kind),
    // Whole numbers: no Poisson of times.
    ...(kind === 'time' ? [] : [obj({ dist: z.literal('poisson'), mean: param(kind, true) })]),
  ]);
}

const CACHE = new Map<DistKind, z.ZodType<Dist>>();

/** A `Dist`: a number (a duration string too for `time`) or a `{dist: ...}` mapping. */
export function dist(kind: DistKind) {
  let mapping = CACHE.get(kind);
  if (mapping === undefined) CACHE.set(kind, (mapping = distMapping(kind)));
  const m = mapping;
  const s = scalar(kind);
  let json = JSONS.get(kind);
  if (json === undefined) JSONS.set(kind, (json = { anyOf: [jsonOf(s), jsonOf(m)] }));
  return switchOn<Dist>('a number or a {dist: ...} mapping', (v) => (isMapping(v) ? m : s), json);
}

/** What the JSON Schema says a distribution of each kind may be: its number, or one of its mappings. */
const JSONS = new Map<DistKind, Record<string, unknown>>();
