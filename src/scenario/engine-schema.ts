import { z } from 'zod';
import { BACKOFF_STRATEGIES, type BackoffOptions } from '../engine/backoff.js';
import { GUARD_DEFAULTS } from '../engine/guard-options.js';
import type { EngineConfig, RetryPolicy } from '../traffic/config.js';
import { SDK_NAMES, SDK_PRESETS } from '../traffic/sdk-presets.js';
import {
  duration,
  expecting,
  nonNegative,
  nonNegativeInt,
  num,
  obj,
  oneOf,
  orFalse,
  positive,
  positiveInt,
  ratio,
  switchOn,
  text,
} from './schema-kit.js';
import { streamLimitsSchema } from './stream-schema.js';

/** Engine defaults for layers whose retry policy is `engine`: the Guard's own (one source). */
export const ENGINE_DEFAULTS: Readonly<Required<EngineConfig>> = Object.freeze({
  maxAttempts: GUARD_DEFAULTS.maxAttempts,
  backoff: {},
  retryBudget: GUARD_DEFAULTS.retryBudget,
  throttle: GUARD_DEFAULTS.throttle,
  breaker: GUARD_DEFAULTS.breaker,
  limits: [...GUARD_DEFAULTS.limits],
  concurrency: GUARD_DEFAULTS.concurrency,
  minAttemptMs: GUARD_DEFAULTS.minAttemptMs,
  state: 'local',
  stream: {},
});

/** Where a replicated layer's engines keep their state: each its own, or one store for all. */
export const ENGINE_STATES = ['local', 'shared'] as const;

/** Naive retries back off without jitter, as hand-written retry loops usually do. */
export const NAIVE_BACKOFF: Readonly<Partial<BackoffOptions>> = Object.freeze({
  strategy: 'exponential',
  baseMs: 100,
  capMs: 10_000,
});
export const NAIVE_ATTEMPTS = 3;
export const RETRY_POLICIES = ['none', 'naive', 'sdk', 'engine'] as const;

const retries = () => num('an integer from 0 to 100', (n) => Number.isInteger(n) && n >= 0 && n <= 100);
const attempts = () => num('an integer from 1 to 100', (n) => Number.isInteger(n) && n >= 1 && n <= 100);
/** The breaker's trip ratios: above 0, at most 1, or `false` for "this trigger is off". */
const tripRatio = () =>
  switchOn<number | false>('a number above 0 and at most 1, or false', (v) =>
    v === false
      ? z.literal(false)
      : typeof v === 'number'
        ? num('a number above 0 and at most 1, or false', (n) => n > 0 && n <= 1)
        : undefined,
  );

// The ranges below are the engine constructors' (so mistakes surface here, with a path).
const STRATEGIES = BACKOFF_STRATEGIES as ['full_jitter', 'decorrelated_jitter', 'exponential'];
const atLeastOne = () => num('a number >= 1', (n) => n >= 1);

const backoff = () =>
  obj(
    {
      strategy: oneOf(STRATEGIES).optional(),
      baseMs: duration({ positive: true }).optional(),
      capMs: duration().optional(),
      multiplier: atLeastOne().optional(),
    },
    'a mapping of backoff options',
  );

const retryBudget = () =>
  obj({
    ratio: num('a number from 0 to 1000', (n) => n >= 0 && n <= 1000).optional(),
    windowMs: duration({ positive: true }).optional(),
    buckets: positiveInt().optional(),
    minRetriesPerSec: nonNegative().optional(),
  });

const throttle = () =>
  obj({
    k: num('a number from 1 to 1000', (n) => n >= 1 && n <= 1000).optional(),
    windowMs: duration({ positive: true }).optional(),
    buckets: positiveInt().optional(),
    maxDropProbability: ratio().optional(),
    minRequests: nonNegative().optional(),
  });

const breaker = () =>
  obj({
    windowMs: duration({ positive: true }).optional(),
    buckets: positiveInt().optional(),
    minimumCalls: positiveInt().optional(),
    failureRatio: tripRatio().optional(),
    slowCallRatio: tripRatio().optional(),
    slowCallMs: duration().optional(),
    throttledRatio: tripRatio().optional(),
    openMs: duration({ positive: true }).optional(),
    openBackoffMultiplier: atLeastOne().optional(),
    maxOpenMs: duration().optional(),
    halfOpenProbes: positiveInt().optional(),
  });

const concurrency = () =>
  obj({
    maxInFlight: positiveInt().optional(),
    maxQueue: nonNegativeInt().optional(),
    maxWaitMs: duration().optional(),
  });

const limit = () =>
  obj(
    {
      name: text(),
      unit: oneOf(['requests', 'tokens']),
      rate: positive(),
      per: oneOf(['second', 'minute']),
      burst: positive().optional(),
      keyBy: text().optional(),
    },
    'a limit like {name: rps, unit: requests, rate: 10, per: second}',
  );

/** Each engine option's schema, none defaulted. */
function engineFields() {
  return {
    maxAttempts: attempts(),
    backoff: backoff(),
    retryBudget: orFalse(retryBudget(), 'a mapping of retry budget options'),
    throttle: orFalse(throttle(), 'a mapping of throttle options'),
    breaker: orFalse(breaker(), 'a mapping of breaker options'),
    limits: z.array(limit(), { error: expecting('a list of limits') }),
    concurrency: orFalse(concurrency(), 'a mapping of concurrency options'),
    minAttemptMs: duration(),
    state: oneOf(ENGINE_STATES),
    stream: streamLimitsSchema(),
  };
}

/** The scenario's top-level `engine:` block, every option defaulted. */
export function engineSchema(): z.ZodType<EngineConfig> {
  const f = engineFields();
  const d = ENGINE_DEFAULTS;
  return obj(
    {
      maxAttempts: f.maxAttempts.default(d.maxAttempts),
      backoff: f.backoff.default(() => ({})),
      retryBudget: f.retryBudget.default(() => ({})),
      throttle: f.throttle.default(() => ({})),
      breaker: f.breaker.default(() => ({})),
      limits: f.limits.default(() => []),
      concurrency: f.concurrency.default(false),
      minAttemptMs: f.minAttemptMs.default(d.minAttemptMs),
      state: f.state.default(d.state),
      // Absent unless given: most scenarios do not stream.
      stream: f.stream.optional(),
    },
    'a mapping of engine options',
  ) as z.ZodType<EngineConfig>;
}

/** A layer's `retry.engine:` overrides of the top-level engine options. */
function engineOverrides(): z.ZodType<Partial<EngineConfig>> {
  const f = engineFields();
  const shape = Object.fromEntries(Object.entries(f).map(([k, s]) => [k, s.optional()]));
  return obj(shape, 'a mapping of engine options') as unknown as z.ZodType<Partial<EngineConfig>>;
}

/**
 * A layer's `retry:`. One mapping takes every policy's keys and the chosen `policy` reads its
 * own: so `--set layers[*].retry.policy=engine` works on a layer written for `naive` (its
 * `attempts` is then ignored) rather than failing on keys the new policy does not have.
 */
export function retrySchema(): z.ZodType<RetryPolicy> {
  return obj(
    {
      policy: oneOf(RETRY_POLICIES),
      attempts: attempts().optional(),
      backoff: backoff().optional(),
      sdk: oneOf(SDK_NAMES).optional(),
      maxRetries: retries().optional(),
      runnerRetries: retries().optional(),
      engine: engineOverrides().optional(),
    },
    'a retry policy like {policy: naive, attempts: 3}',
  ).transform((r): RetryPolicy => {
    switch (r.policy) {
      case 'none':
        return { policy: 'none' };
      case 'naive':
        return { policy: 'naive', attempts: r.attempts ?? NAIVE_ATTEMPTS, backoff: { ...NAIVE_BACKOFF, ...r.backoff } };
      case 'sdk': {
        const sdk = r.sdk ?? 'openai';
        return {
          policy: 'sdk',
          sdk,
          maxRetries: r.maxRetries ?? SDK_PRESETS[sdk].maxRetries,
          runnerRetries: r.runnerRetries ?? 0,
        };
      }
      case 'engine':
        return { policy: 'engine', engine: r.engine ?? {} };
    }
  });
}
