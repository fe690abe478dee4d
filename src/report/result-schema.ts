import { z } from 'zod';

/**
 * The parts of a `stormlab.result/v1` file the report reads, checked before rendering so a
 * hand-edited or truncated file is a clear message, not a crash. Objects are loose: fields
 * the report does not read (and fields of newer writers) pass through untouched.
 */
const num = z.number();
const nums = z.array(num);
const percentiles = z.looseObject({ p50: num, p95: num, p99: num });
const share = z.looseObject({ '429': num, '5xx': num, timeout: num });

const layer = z.looseObject({
  name: z.string(),
  logicalCalls: num,
  attempts: num,
  amplification: num,
  successRate: num,
  latencyMs: percentiles,
  wastedTokens: num,
  shed: z.record(z.string(), num),
  truncatedSuccesses: num.optional(),
  ttftMs: percentiles.optional(),
});

const engineSeries = z.looseObject({
  layer: z.string(),
  dropProbability: nums,
  budgetBalance: nums,
  breakerOpen: nums,
});

const series = z.looseObject({
  binMs: num.positive(),
  fromBin: num,
  offered: nums,
  ok: nums,
  shed: nums,
  upstreamAttempts: nums,
  leafCalls: nums,
  status429: nums,
  status5xx: nums,
  timeouts: nums,
  faultActive: nums,
  engine: z.array(engineSeries),
});

const variant = z.looseObject({
  name: z.string(),
  durationMs: num,
  amplification: num,
  goodput: num,
  successRate: num,
  truncatedSuccesses: num.optional(),
  roots: z.looseObject({ offered: num, ok: num, latencyMs: percentiles }),
  layers: z.array(layer),
  upstream: z.looseObject({ attempts: num, share, wastedTokens: num, tokensServed: num }),
  recoveryMs: num.nullable(),
  series,
});

export const resultFileSchema = z.looseObject({
  schema: z.literal('stormlab.result/v1'),
  scenario: z.string(),
  seed: num,
  mode: z.string(),
  variants: z.array(variant).min(1),
});
