import { z } from 'zod';
import { TOOL_DEFAULTS, type ToolConfig, type ToolFaultKind, type ToolFaultPhase } from '../upstream/tool-config.js';
import type { RetryPolicy } from '../traffic/config.js';
import type { Dist } from '../upstream/distribution.js';
import {
  ENTRY_DEFAULT_PER,
  TENANT_USERS_RANGE,
  USERS_DEFAULTS,
  type EntryConfig,
  type InferenceConfig,
  type TenantConfig,
  type ToolCallConfig,
  type ToolDegrade,
  type UsersConfig,
} from '../traffic/tool-call-config.js';
import { dist } from './dist-schema.js';
import { formatDuration } from './duration.js';
import { retrySchema } from './engine-schema.js';
import {
  bool,
  duration,
  expecting,
  httpStatus,
  inRangeOf,
  isMapping,
  jsonOf,
  nonNegativeInt,
  obj,
  oneOf,
  positive,
  positiveInt,
  ratio,
  switchOn,
  tagged,
  name,
} from './schema-kit.js';

export const TOOL_DEGRADES = ['fail', 'draft', 'read-only', 'defer'] as const satisfies readonly ToolDegrade[];
export const TOOL_CALL_DEFAULTS = { calls: 1, degrade: 'fail' } as const;

const status = () =>
  switchOn<number | Record<string, number>>(
    'an HTTP status or weights by status like {503: 0.7, 429: 0.3}',
    (v) =>
      typeof v === 'number'
        ? httpStatus()
        : isMapping(v)
          ? z.record(
              z.string().regex(/^[1-5]\d\d$/, { error: 'expected an HTTP status from 100 to 599 as the key' }),
              positive(),
            )
          : undefined,
    {
      anyOf: [
        jsonOf(httpStatus()),
        { type: 'object', propertyNames: { pattern: '^[1-5]\\d\\d$' }, additionalProperties: jsonOf(positive()) },
      ],
    },
  );

function fault<K extends ToolFaultKind, S extends z.core.$ZodLooseShape>(kind: K, extra: S) {
  return obj({ kind: z.literal(kind), from: duration().default(0), to: duration().optional(), ...extra }).superRefine(
    (f, ctx) => {
      const { from, to } = f as unknown as { from: number; to?: number };
      if (to !== undefined && to <= from)
        ctx.addIssue({
          code: 'custom',
          path: ['to'],
          input: to,
          message: `expected a time after from (${formatDuration(from)}), got ${formatDuration(to)}`,
        });
    },
  );
}

/** A tool's fault phases: the model's errors, outage and latency; `hang` (no answer, no effect); `lost` (the effect, then no answer). */
const toolFault = () =>
  tagged(
    'kind',
    [
      fault('errors', { rate: ratio().optional(), status: status().optional() }),
      fault('outage', { status: status().optional() }),
      fault('latency', { factor: positive() }),
      fault('hang', { rate: ratio().optional() }),
      fault('lost', { rate: ratio().optional() }),
    ],
    'a tool fault like {kind: lost, from: 10s, to: 40s, rate: 0.5}',
  ).transform((f): ToolFaultPhase => {
    const r = f as {
      kind: ToolFaultKind;
      from: number;
      to?: number;
      rate?: number;
      status?: number | Record<string, number>;
      factor?: number;
    };
    return {
      kind: r.kind,
      fromMs: r.from,
      toMs: r.to ?? Infinity,
      rate: r.rate ?? 1,
      ...(r.status === undefined ? {} : { status: r.status }),
      ...(r.factor === undefined ? {} : { factor: r.factor }),
    };
  });

const toolService = () =>
  obj(
    {
      slots: positiveInt().default(TOOL_DEFAULTS.slots),
      queue: nonNegativeInt().default(TOOL_DEFAULTS.queue),
      latency: dist('time').default(TOOL_DEFAULTS.latencyMs),
      rps: positive().optional(),
      faults: z.array(toolFault(), { error: expecting('a list of tool faults') }).default(() => []),
    },
    'a tool like {slots: 32, latency: 800ms, rps: 50}',
  );

/** `tools:` at the top: the tool service's tools by name (`gmail.send: {latency: 800ms}`). */
export function toolsSchema(): z.ZodType<ToolConfig[], unknown> {
  return z
    .record(name('a tool name'), toolService(), { error: expecting('a mapping of tool names to tools') })
    .transform((m): ToolConfig[] =>
      Object.entries(m).map(([name, t]) => ({
        name,
        slots: t.slots,
        queue: t.queue,
        latencyMs: t.latency,
        ...(t.rps === undefined ? {} : { rps: t.rps }),
        faults: t.faults,
      })),
    ) as unknown as z.ZodType<ToolConfig[], unknown>;
}

/** One entry of a layer's `tools:`: a tool-call leaf (`{kind: tool, tool: gmail.send, sideEffect: true}`). */
const toolCall = () =>
  obj(
    {
      kind: z.literal('tool', { error: expecting('kind: tool') }).optional(),
      tool: name('a tool name'),
      sideEffect: bool(),
      calls: positiveInt().default(TOOL_CALL_DEFAULTS.calls),
      timeout: duration({ positive: true }).optional(),
      retry: retrySchema().optional(),
      idempotency: bool().optional(),
      degrade: oneOf(TOOL_DEGRADES).default(TOOL_CALL_DEFAULTS.degrade),
      stage: name('a stage name').optional(),
    },
    'a tool call like {kind: tool, tool: gmail.send, sideEffect: true}',
  ).transform(
    (t): ToolCallConfig => ({
      tool: t.tool,
      sideEffect: t.sideEffect,
      calls: t.calls,
      timeoutMs: t.timeout ?? Infinity,
      ...(t.retry === undefined ? {} : { retry: t.retry as RetryPolicy }),
      ...(t.idempotency === undefined ? {} : { idempotency: t.idempotency }),
      degrade: t.degrade,
      ...(t.stage === undefined ? {} : { stage: t.stage }),
    }),
  );

export function toolCallsSchema(): z.ZodType<ToolCallConfig[], unknown> {
  return z.array(toolCall(), { error: expecting('a list of tool calls') }) as unknown as z.ZodType<
    ToolCallConfig[],
    unknown
  >;
}

/** `users:` at the top: how the users behind root tasks resubmit. */
export function usersSchema(): z.ZodType<UsersConfig, unknown> {
  return obj(
    {
      patience: switchOn<Dist>('a duration, a time distribution, or never', (v) =>
        v === 'never' ? z.literal('never').transform(() => Infinity) : dist('time'),
      ).optional(),
      onError: ratio().default(USERS_DEFAULTS.onError),
      errorDelay: dist('time').default(USERS_DEFAULTS.errorDelayMs),
      maxResubmits: nonNegativeInt().default(USERS_DEFAULTS.maxResubmits),
      honourRetryAfter: bool().default(USERS_DEFAULTS.honourRetryAfter),
    },
    'a mapping like {patience: 10s, onError: 0.5, maxResubmits: 2}',
  ).transform(
    (u): UsersConfig => ({
      patienceMs: u.patience ?? USERS_DEFAULTS.patienceMs,
      onError: u.onError,
      errorDelayMs: u.errorDelay,
      maxResubmits: u.maxResubmits,
      honourRetryAfter: u.honourRetryAfter,
    }),
  ) as unknown as z.ZodType<UsersConfig, unknown>;
}

export const INFERENCE_DEFAULTS = { maxQueue: 256, maxWaitMs: 10_000 } as const;

/** A last layer's `inference:`: a concurrency limit and bounded queue in front of the model, optionally a smaller fallback. */
export function inferenceSchema(): z.ZodType<InferenceConfig, unknown> {
  return obj(
    {
      maxInFlight: positiveInt(),
      maxQueue: nonNegativeInt().default(INFERENCE_DEFAULTS.maxQueue),
      maxWait: duration().default(INFERENCE_DEFAULTS.maxWaitMs),
      fallback: name('a model name').optional(),
    },
    'a mapping like {maxInFlight: 32, maxQueue: 64, maxWait: 5s}',
  ).transform(
    (i): InferenceConfig => ({
      maxInFlight: i.maxInFlight,
      maxQueue: i.maxQueue,
      maxWaitMs: i.maxWait,
      ...(i.fallback === undefined ? {} : { fallback: i.fallback }),
    }),
  ) as unknown as z.ZodType<InferenceConfig, unknown>;
}

/** `tenants:` at the top: who root tasks belong to, by weight. */
export function tenantsSchema(): z.ZodType<TenantConfig[], unknown> {
  return z
    .array(
      obj(
        { name: name('a tenant name'), weight: positive().default(1), users: inRangeOf(TENANT_USERS_RANGE).optional() },
        'a tenant like {name: acme, weight: 1, users: 50}',
      ),
      {
        error: expecting('a list of tenants'),
      },
    )
    .min(1, { error: 'expected at least one tenant' })
    .superRefine((ts, ctx) => {
      ts.forEach((t, i) => {
        if (ts.findIndex((u) => u.name === t.name) < i)
          ctx.addIssue({
            code: 'custom',
            path: [i, 'name'],
            input: t.name,
            message: `duplicate tenant name ${JSON.stringify(t.name)}`,
          });
      });
    }) as unknown as z.ZodType<TenantConfig[], unknown>;
}

/** `entry:` at the top: a token bucket per tenant (or per user of each tenant) in front of the root layer. */
export function entrySchema(): z.ZodType<EntryConfig, unknown> {
  return obj(
    { rps: positive(), burst: positive().optional(), per: oneOf(['tenant', 'user']).default(ENTRY_DEFAULT_PER) },
    'a mapping like {rps: 5, burst: 10, per: user}',
  ).transform((e): EntryConfig => ({ rps: e.rps, burst: e.burst ?? e.rps, per: e.per })) as unknown as z.ZodType<
    EntryConfig,
    unknown
  >;
}

/**
 * What needs the whole document: a tool call names a tool of `tools:`, and no tool calls on the
 * last layer (its calls go to the model). Reads the raw document, skipping what the schema reports.
 */
export function toolProblems(doc: unknown): string[] {
  if (!isMapping(doc)) return [];
  const known = isMapping(doc.tools) ? Object.keys(doc.tools) : [];
  const layers = Array.isArray(doc.layers) ? doc.layers : [];
  return layers.flatMap((layer, i) => [
    ...inferenceProblems(layer, i, layers.length),
    ...toolCallProblems(layer, i, layers.length, known),
  ]);
}

function inferenceProblems(layer: unknown, i: number, count: number): string[] {
  if (!isMapping(layer) || !isMapping(layer.inference)) return [];
  if (i < count - 1)
    return [`layers[${i}].inference: only the last layer calls the model (this is layer ${i + 1} of ${count})`];
  const fallback = layer.inference.fallback;
  const models = Array.isArray(layer.models) ? layer.models : [];
  if (typeof fallback !== 'string' || fallback === '' || models.includes(fallback)) return [];
  return [
    `layers[${i}].inference.fallback: ${JSON.stringify(fallback)} is not one of this layer's models (${models.length > 0 ? models.join(', ') : 'none listed; add it to models:'})`,
  ];
}

function toolCallProblems(layer: unknown, i: number, count: number, known: string[]): string[] {
  if (!isMapping(layer) || !Array.isArray(layer.tools) || layer.tools.length === 0) return [];
  if (i === count - 1)
    return [`layers[${i}].tools: the last layer calls the model; give tool calls to a layer above it`];
  return layer.tools.flatMap((t, j) =>
    isMapping(t) && typeof t.tool === 'string' && t.tool !== '' && !known.includes(t.tool)
      ? [
          `layers[${i}].tools[${j}].tool: unknown tool ${JSON.stringify(t.tool)} (tools: ${known.length > 0 ? known.join(', ') : 'none; add them under tools:'})`,
        ]
      : [],
  );
}
