import { z } from 'zod';
import type {
  EffectiveScenario,
  EngineSeries,
  HopSettle,
  OverrideRecord,
  LayerResult,
  LiveFigures,
  Percentiles,
  ResultFile,
  RootResult,
  RunResult,
  SeriesResult,
  UpstreamHop,
  UpstreamResult,
  UpstreamShare,
} from '../run/metrics/result.js';

/**
 * The parts of a `stormlab.result/v1` file the report reads, checked before rendering so a
 * hand-edited or truncated file is a clear message, not a crash. Objects are loose: fields
 * the report does not read (and fields of newer writers) pass through untouched.
 */
/**
 * A loose object reading fields of the writer's type `T` (run/metrics/result.ts, the one
 * declaration of the file's shape): a field name `T` does not declare fails to compile here,
 * so a field renamed or dropped there cannot leave this reader checking a name no file has.
 */
function reads<T>() {
  return <S extends z.core.$ZodLooseShape & { [K in keyof S]: K extends keyof T ? unknown : never }>(shape: S) =>
    z.looseObject(shape);
}

const num = z.number();
const nums = z.array(num);
const percentiles = reads<Percentiles>()({ p50: num, p95: num, p99: num });
const share = reads<UpstreamShare>()({ '429': num, '5xx': num, timeout: num });

const layer = reads<LayerResult>()({
  name: z.string(),
  logicalCalls: num,
  attempts: num,
  amplification: num,
  successRate: num,
  latencyMs: percentiles,
  wastedTokens: num,
  shed: z.record(z.string(), num),
  truncatedSuccesses: num.optional(),
  resumedStreams: num.optional(),
  ttftMs: percentiles.optional(),
});

const engineSeries = reads<EngineSeries>()({
  layer: z.string(),
  dropProbability: nums,
  budgetBalance: nums,
  breakerOpen: nums,
});

const series = reads<SeriesResult>()({
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

/** A scenario with tool calls adds `tools` (per tool) and, with impatient users, `users`: optional in v1. */
const tool = z.looseObject({
  name: z.string(),
  sideEffect: z.boolean(),
  logicalCalls: num,
  attempts: num,
  executions: num,
  duplicates: num,
  conflicts: num,
  ok: num,
  degraded: num,
  failed: num,
  degradedShare: num,
  failureRate: num,
  share: z.looseObject({ '429': num }),
});
const users = z.looseObject({ tasks: num, submissions: num, resubmits: num, amplification: num });

/**
 * Hop 2 of a gateway under test. A file written before hop 2 was read settled has neither the
 * total nor `settle`: it reads, and the report shows no hops for it (`hopOf`).
 */
const hop = reads<UpstreamHop>()({
  sent: num,
  reached: num,
  amplification: num,
  totalAmplification: num.optional(),
  status: z.record(z.string(), num),
  noLengthHeader: num.optional(),
  lengthsAsAsked: z.boolean().optional(),
  settle: reads<HopSettle>()({
    settled: z.boolean(),
    outcome: z.enum(['quiet', 'timeout', 'skipped', 'unreadable']),
    timeoutMs: num,
    waitedMs: num,
    inFlight: num,
    afterEnd: num,
  }).optional(),
});
const live = reads<LiveFigures>()({ upstream: hop.optional() });

/** What ran (newer files): the document is kept as written, each override read as a record. */
const effective = reads<EffectiveScenario>()({
  document: z.unknown(),
  overrides: z.array(reads<OverrideRecord>()({ path: z.string(), from: z.string() })),
});

/** A note beside the figures (newer files): the report prints its line. */
const note = z.looseObject({ kind: z.string(), message: z.string() });

const variant = reads<RunResult>()({
  name: z.string(),
  durationMs: num,
  amplification: num,
  goodput: num,
  successRate: num,
  truncatedSuccesses: num.optional(),
  resumedStreams: num.optional(),
  roots: reads<RootResult>()({ offered: num, ok: num, latencyMs: percentiles }),
  layers: z.array(layer),
  upstream: reads<UpstreamResult>()({ attempts: num, share, wastedTokens: num, tokensServed: num }),
  recoveryMs: num.nullable(),
  series,
  tools: z.array(tool).optional(),
  users: users.optional(),
  live: live.optional(),
  effective: effective.optional(),
});

export const resultFileSchema = reads<ResultFile>()({
  schema: z.literal('stormlab.result/v1'),
  scenario: z.string(),
  seed: num,
  mode: z.string(),
  variants: z.array(variant).min(1),
  notes: z.array(note).optional(),
});
