import { z } from 'zod';
import { TOOL_POLICY_LIMITS } from '../fake-upstream/tool-policy.js';
import type {
  AnswerTokens,
  ContentFilterMode,
  FaultKind,
  FaultPhase,
  ModelConfig,
  UpstreamConfig,
} from '../upstream/config.js';
import type { Dist } from '../upstream/distribution.js';
import { dist } from './dist-schema.js';
import { formatDuration, parseDuration } from './duration.js';
import { MODEL_DEFAULTS } from '../upstream/upstream-model.js';
import { ERROR_STATUS } from '../upstream/fault-timeline.js';
import {
  bool,
  duration,
  expecting,
  httpStatus,
  isMapping,
  jsonOf,
  nonNegative,
  obj,
  positive,
  positiveInt,
  nonNegativeInt,
  intBetween,
  num,
  oneOf,
  ratio,
  switchOn,
  tagged,
  name,
} from './schema-kit.js';

/** A stall's length: a duration, or `forever` (the connection stays open, nothing more comes). */
const stallFor = () =>
  switchOn<number>('a duration like 30s, or forever', (v) =>
    v === 'forever'
      ? z.literal('forever').transform(() => Infinity)
      : parseDuration(v) === undefined
        ? undefined
        : duration({ positive: true }),
  );

/** A model's natural answer length: `max` (every answer `max_tokens` long) or a token count distribution. */
const answerTokens = () =>
  switchOn<AnswerTokens>('max, a number of tokens or a {dist: ...} mapping', (v) =>
    v === 'max' ? z.literal('max') : typeof v === 'number' || isMapping(v) ? dist('count') : undefined,
  );

const model = () =>
  obj(
    {
      name: name('a model name'),
      slots: positiveInt(),
      queue: nonNegativeInt(),
      shedStatus: httpStatus().default(MODEL_DEFAULTS.shedStatus),
      ttft: dist('time'),
      tpot: dist('time'),
      rpm: positive().optional(),
      tpm: positive().optional(),
      loadStretch: nonNegative().default(MODEL_DEFAULTS.loadStretch),
      contextTokens: positiveInt().optional(),
      answerTokens: answerTokens().optional(),
      continuation: oneOf(['prefill', 'none']).optional(),
    },
    'a model mapping',
  ).transform(
    ({ ttft, tpot, rpm, tpm, contextTokens, answerTokens, continuation, ...m }): ModelConfig => ({
      ...m,
      ttftMs: ttft,
      tpotMs: tpot,
      ...(rpm === undefined ? {} : { rpm }),
      ...(tpm === undefined ? {} : { tpm }),
      contextTokens: contextTokens ?? MODEL_DEFAULTS.contextTokens,
      ...(answerTokens === undefined ? {} : { answerTokens }),
      ...(continuation === 'prefill' ? { continuation } : {}),
    }),
  );

/** The status of a fault that answers with an error: what the model's fault timeline accepts. */
const errorStatus = () =>
  num(
    `an HTTP error status from ${ERROR_STATUS.min} to ${ERROR_STATUS.max}`,
    (n) => Number.isInteger(n) && n >= ERROR_STATUS.min && n <= ERROR_STATUS.max,
    { type: 'integer', minimum: ERROR_STATUS.min, maximum: ERROR_STATUS.max },
  );

/** Weights by status (`{503: 0.7, 429: 0.3}`): keys are statuses, weights >= 0 adding up to more than 0. */
const statusWeights = () =>
  z.record(z.string(), nonNegative()).superRefine((w, ctx) => {
    for (const k of Object.keys(w)) {
      const n = Number(k);
      if (!(Number.isInteger(n) && n >= ERROR_STATUS.min && n <= ERROR_STATUS.max))
        ctx.addIssue({
          code: 'custom',
          path: [k],
          input: k,
          message: `expected an HTTP error status from ${ERROR_STATUS.min} to ${ERROR_STATUS.max} as the key, got ${JSON.stringify(k)}`,
        });
    }
    if (!(Object.values(w).reduce((a, b) => a + b, 0) > 0))
      ctx.addIssue({ code: 'custom', input: w, message: 'expected weights adding up to more than 0' });
  });

const status = () =>
  switchOn<number | Record<string, number>>(
    'an HTTP status or weights by status like {503: 0.7, 429: 0.3}',
    (v) => (typeof v === 'number' ? errorStatus() : isMapping(v) ? statusWeights() : undefined),
    {
      anyOf: [
        jsonOf(errorStatus()),
        { type: 'object', propertyNames: { pattern: '^[45]\\d\\d$' }, additionalProperties: jsonOf(nonNegative()) },
      ],
    },
  );

/** The keys every fault has: when (on [from, to), `to` defaulting to the end of the run) and which model (all when absent). */
function fault<K extends FaultKind, S extends z.core.$ZodLooseShape>(kind: K, extra: S) {
  return obj({
    kind: z.literal(kind),
    from: duration().default(0),
    to: duration().optional(),
    model: name('a model name').optional(),
    ...extra,
  }).superRefine((f, ctx) => {
    const { from, to } = f as unknown as { from: number; to?: number };
    if (to !== undefined && to <= from)
      ctx.addIssue({
        code: 'custom',
        path: ['to'],
        input: to,
        message: `expected a time after from (${formatDuration(from)}), got ${formatDuration(to)}`,
      });
  });
}

/** A fault that needs at least one of two fields (`latency`: a factor or an added time). */
/** How the JSON Schema says `oneOfTwo`: one of the two keys is required. */
const eitherJson = (a: string, b: string) => ({ anyOf: [{ required: [a] }, { required: [b] }] });

function oneOfTwo(a: string, b: string) {
  return (f: Record<string, unknown>, ctx: z.core.$RefinementCtx<Record<string, unknown>>) => {
    if (f[a] === undefined && f[b] === undefined)
      ctx.addIssue({ code: 'custom', path: [a], input: undefined, message: `expected ${a} or ${b} (or both)` });
  };
}

const faultSchema = () =>
  tagged(
    'kind',
    [
      fault('errors', { rate: ratio().optional(), status: status().optional() }),
      fault('outage', { status: status().optional() }),
      fault('latency', { factor: positive().optional(), add: dist('time').optional() })
        .superRefine(oneOfTwo('factor', 'add'))
        .meta(eitherJson('factor', 'add')),
      fault('reset', { rate: ratio().optional() }),
      fault('hang', { rate: ratio().optional() }),
      fault('midstream', { rate: ratio().optional() }),
      fault('quota', {}),
      fault('slow-first-token', {
        rate: ratio().optional(),
        ttft: duration().optional(),
        add: dist('time').optional(),
      })
        .superRefine(oneOfTwo('ttft', 'add'))
        .meta(eitherJson('ttft', 'add')),
      fault('stall', { rate: ratio().optional(), after: positiveInt(), for: stallFor().optional() }),
      fault('cut', { rate: ratio().optional(), after: positiveInt() }),
      fault('malformed', { rate: ratio().optional() }),
      fault('missing-done', { rate: ratio().optional() }),
      fault('prefill-rejected', { rate: ratio().optional() }),
      fault('content-filter', {
        rate: ratio().optional(),
        mode: oneOf(['finish', 'reject']).optional(),
        after: nonNegativeInt().optional(),
      }),
      fault('context-length', { rate: ratio().optional(), contextTokens: positiveInt() }),
    ],
    'a fault like {kind: outage, from: 10s, to: 20s}',
  ).transform((f): FaultPhase => {
    const r = f as {
      kind: FaultKind;
      from: number;
      to?: number;
      model?: string;
      rate?: number;
      status?: number | Record<string, number>;
      factor?: number;
      add?: Dist;
      ttft?: number;
      after?: number;
      for?: number;
      mode?: ContentFilterMode;
      contextTokens?: number;
    };
    return {
      kind: r.kind,
      fromMs: r.from,
      toMs: r.to ?? Infinity,
      ...(r.model === undefined ? {} : { model: r.model }),
      rate: r.rate ?? 1,
      ...(r.status === undefined ? {} : { status: r.status }),
      ...(r.factor === undefined ? {} : { factor: r.factor }),
      ...(r.add === undefined ? {} : { addMs: r.add }),
      ...(r.ttft === undefined ? {} : { ttftMs: r.ttft }),
      ...(r.after === undefined ? {} : { afterTokens: r.after }),
      ...(r.for === undefined || r.for === Infinity ? {} : { stallMs: r.for }),
      ...(r.mode === undefined ? {} : { mode: r.mode }),
      ...(r.contextTokens === undefined ? {} : { contextTokens: r.contextTokens }),
    };
  });

export function upstreamSchema(): z.ZodType<UpstreamConfig> {
  return obj(
    {
      cancelOnDisconnect: bool().default(false),
      models: z
        .array(model(), { error: expecting('a list of models') })
        .min(1, { error: 'expected at least one model' }),
      faults: z.array(faultSchema(), { error: expecting('a list of faults') }).default(() => []),
      aliases: z
        .record(name('a model alias'), name('a model name'), { error: expecting('a mapping of name: model') })
        .optional(),
      toolPolicy: obj(
        {
          rounds: intBetween(...TOOL_POLICY_LIMITS.rounds).optional(),
          parallel: intBetween(...TOOL_POLICY_LIMITS.parallel).optional(),
          pick: oneOf(['cycle', 'seeded']).optional(),
        },
        'a mapping like {rounds: 2}',
      ).optional(),
    },
    'a mapping with models (and faults)',
  );
}
