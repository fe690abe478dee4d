import { z } from 'zod';
import type { ArrivalConfig, EngineConfig, LayerConfig } from '../traffic/config.js';
import { dist } from './dist-schema.js';
import { formatDuration } from './duration.js';
import { engineSchema, retrySchema } from './engine-schema.js';
import type { Scenario, Variant } from './scenario.js';
import { LIVE_APIS } from '../run/live/wire-format.js';
import { IDEMPOTENCY_STORES } from './scenario.js';
import {
  bool,
  duration,
  expecting,
  isMapping,
  nonNegative,
  intBetween,
  obj,
  oneOf,
  positive,
  positiveInt,
  switchOn,
  tagged,
  name,
  text,
} from './schema-kit.js';
import { parseSetText } from './set-override.js';
import { stagesSchema } from './stage-schema.js';
import { upstreamSchema } from './upstream-schema.js';
import {
  entrySchema,
  inferenceSchema,
  tenantsSchema,
  toolCallsSchema,
  toolsSchema,
  usersSchema,
} from './tool-schema.js';

/**
 * The user-facing scenario format (YAML or JSON), with its defaults. Durations anywhere take a
 * number (ms) or a string with units; distributions take a number or a `{dist: ...}` mapping.
 * The output is close to `Scenario`; `validateDocument` adds what needs the whole document
 * (model references, default variants).
 */
export const SCENARIO_DEFAULTS = {
  seed: 1,
  drainMs: 120_000,
  deadlineMs: Infinity,
  layerTimeoutMs: Infinity,
  fanout: 1,
  replicas: 1,
  connections: 256,
} as const;

/** More would be a typo: each replica is an engine of its own. */
export const MAX_REPLICAS = 1000;

const arrivalSchema = () =>
  tagged(
    'type',
    [
      obj({ type: z.literal('constant'), rate: positive() }),
      obj({ type: z.literal('poisson'), rate: positive() }),
      obj({ type: z.literal('ramp'), from: nonNegative(), to: nonNegative() }),
      obj({
        type: z.literal('burst'),
        rate: nonNegative(),
        burstRate: positive(),
        every: duration({ positive: true }),
        length: duration({ positive: true }),
      }).superRefine((a, ctx) => {
        if (a.length > a.every)
          ctx.addIssue({
            code: 'custom',
            path: ['length'],
            input: a.length,
            message: `expected at most every (${formatDuration(a.every)}), got ${formatDuration(a.length)}`,
          });
      }),
      obj({ type: z.literal('closed'), users: positiveInt(), think: dist('time').default(0) }),
    ],
    'an arrival like {type: constant, rate: 20}',
  ).transform((a): ArrivalConfig => {
    if (a.type === 'burst')
      return { type: 'burst', rate: a.rate, burstRate: a.burstRate, everyMs: a.every, lengthMs: a.length };
    if (a.type === 'closed') return { type: 'closed', users: a.users, thinkMs: a.think };
    return a;
  });

/** A layer with no `retry:` makes one attempt: retrying is something a scenario says it does. */
const layerSchema = () =>
  obj(
    {
      name: name('a layer name'),
      fanout: dist('fanout').default(SCENARIO_DEFAULTS.fanout),
      sequential: bool().optional(),
      timeout: duration({ positive: true }).optional(),
      replicas: intBetween(1, MAX_REPLICAS).default(SCENARIO_DEFAULTS.replicas),
      retry: retrySchema().default({ policy: 'none' }),
      models: z
        .array(name('a model name'), { error: expecting('a list of model names') })
        .min(1, { error: 'expected at least one model name' })
        .optional(),
      stream: bool().optional(),
      tools: toolCallsSchema().optional(),
      inference: inferenceSchema().optional(),
      stage: name('a stage name').optional(),
      partial: bool().optional(),
    },
    'a layer like {name: agent, fanout: 3}',
  ).transform(
    (l): LayerConfig => ({
      name: l.name,
      fanout: l.fanout,
      ...(l.sequential === true ? { sequential: true } : {}),
      timeoutMs: l.timeout ?? SCENARIO_DEFAULTS.layerTimeoutMs,
      retry: l.retry,
      // Only when replicated: a one-replica layer is what it was before replicas existed.
      ...(l.replicas === 1 ? {} : { replicas: l.replicas }),
      ...(l.models === undefined ? {} : { models: l.models }),
      ...(l.stream === true ? { stream: true } : {}),
      ...(l.tools === undefined || l.tools.length === 0 ? {} : { tools: l.tools }),
      ...(l.inference === undefined ? {} : { inference: l.inference }),
      ...(l.stage === undefined ? {} : { stage: l.stage }),
      ...(l.partial === undefined ? {} : { partial: l.partial }),
    }),
  );

/** `path=value` strings, as `--set` takes them. */
const setList = () =>
  z.array(
    z.unknown().transform((v, ctx) => {
      const r =
        typeof v === 'string'
          ? parseSetText(v)
          : { ok: false as const, message: `expected path=value, got ${JSON.stringify(v)}` };
      if (r.ok) return r.override;
      ctx.issues.push({ code: 'custom', input: v, message: r.message });
      return z.NEVER;
    }),
  );

/** `name: { path: value, ... }` or `name: [ 'path=value', ... ]`. */
export const variantsSchema = (): z.ZodType<Variant[]> =>
  z
    .record(
      name('a variant name'),
      switchOn(
        'a mapping of path: value, or a list of "path=value"',
        (v) => {
          if (isMapping(v))
            return z
              .record(z.string(), z.unknown())
              .transform((m) => Object.entries(m).map(([path, value]) => ({ path, value })));
          return Array.isArray(v) ? setList() : undefined;
        },
        { anyOf: [{ type: 'object' }, { type: 'array', items: { type: 'string', pattern: '=' } }] },
      ),
      { error: expecting('a mapping of variant names to overrides') },
    )
    .transform((r): Variant[] => Object.entries(r).map(([name, set]) => ({ name, set })));

/** What the schema gives: a `Scenario` less where it came from, with variants absent when the document gives none (then the defaults apply). */
export type ParsedScenario = Omit<Scenario, 'variants' | 'source' | 'document'> & { variants: Variant[] | undefined };

export function scenarioSchema(): z.ZodType<ParsedScenario> {
  return obj(
    {
      name: name('a scenario name'),
      description: z.string({ error: expecting('a one-line description') }).default(''),
      seed: intBetween(0, 0xffffffff).default(SCENARIO_DEFAULTS.seed),
      duration: duration({ positive: true }),
      drain: duration().default(SCENARIO_DEFAULTS.drainMs),
      arrival: arrivalSchema(),
      deadline: duration({ positive: true }).optional(),
      tokens: obj(
        { prompt: dist('count'), completion: dist('count') },
        'a mapping of prompt and completion token counts',
      ),
      layers: z
        .array(layerSchema(), { error: expecting('a list of layers') })
        .min(1, { error: 'expected at least one layer' }),
      engine: (engineSchema() as z.ZodType<EngineConfig, unknown>).prefault({}),
      upstream: upstreamSchema(),
      tools: toolsSchema().optional(),
      users: usersSchema().optional(),
      tenants: tenantsSchema().optional(),
      entry: entrySchema().optional(),
      stages: stagesSchema().optional(),
      idempotency: oneOf(IDEMPOTENCY_STORES).optional(),
      variants: variantsSchema().optional(),
      expect: z
        .array(text('an expectation like "amplification < 1.5"'), { error: expecting('a list of expectations') })
        .default(() => []),
      live: obj(
        {
          connections: positiveInt().default(SCENARIO_DEFAULTS.connections),
          api: oneOf(LIVE_APIS).default('openai'),
          stream: bool().default(false),
        },
        'a mapping like {connections: 256, api: openai, stream: false}',
      ).prefault({}),
    },
    'a mapping of scenario fields',
  ).transform(
    (s): ParsedScenario => ({
      name: s.name,
      description: s.description,
      seed: s.seed,
      durationMs: s.duration,
      drainMs: s.drain,
      traffic: {
        arrival: s.arrival,
        deadlineMs: s.deadline ?? SCENARIO_DEFAULTS.deadlineMs,
        layers: s.layers,
        tokens: s.tokens,
        engine: s.engine,
        ...(s.users === undefined ? {} : { users: s.users }),
        ...(s.tenants === undefined ? {} : { tenants: s.tenants }),
        ...(s.entry === undefined ? {} : { entry: s.entry }),
        ...(s.stages === undefined ? {} : { stages: s.stages }),
      },
      upstream: s.tools === undefined || s.tools.length === 0 ? s.upstream : { ...s.upstream, tools: s.tools },
      variants: s.variants !== undefined && s.variants.length > 0 ? s.variants : undefined,
      expect: s.expect,
      live: s.live,
      ...(s.idempotency === undefined ? {} : { idempotency: s.idempotency }),
    }),
  );
}

/** The variants of a scenario that names none: every layer retrying naively 3 times, or every layer on the engine. */
export function defaultVariants(): Variant[] {
  return [
    { name: 'naive', set: [{ path: 'layers[*].retry', value: { policy: 'naive', attempts: 3 } }] },
    { name: 'engine', set: [{ path: 'layers[*].retry', value: { policy: 'engine' } }] },
  ];
}
