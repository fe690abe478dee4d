import { z } from 'zod';
import { ADAPTIVE_THROTTLE_RANGES } from '../engine/adaptive-throttle.js';
import { BACKOFF_RANGES, BACKOFF_STRATEGIES, type BackoffOptions } from '../engine/backoff.js';
import { CIRCUIT_BREAKER_RANGES } from '../engine/circuit-breaker.js';
import { CONCURRENCY_LIMITER_RANGES } from '../engine/concurrency-limiter.js';
import { DEFAULT_ENGINE_PROFILE, ENGINE_PROFILE_NAMES } from '../engine/engine-profiles.js';
import { GUARD_DEFAULTS, GUARD_RANGES } from '../engine/guard-options.js';
import { LIMIT_RANGES } from '../engine/limiter.js';
import { ABOVE_0, inRange, type Range, rangeText } from '../engine/options.js';
import { RETRY_BUDGET_RANGES } from '../engine/retry-budget.js';
import type { EngineConfig, RetryPolicy } from '../traffic/config.js';
import { LIMIT_KEYS } from '../traffic/engine-guard.js';
import { SDK_NAMES, SDK_PRESETS } from '../traffic/sdk-presets.js';
import {
  durationIn,
  expecting,
  inRangeOf,
  intBetween,
  num,
  obj,
  oneOf,
  name,
  orFalse,
  rangeJson,
  switchOn,
} from './schema-kit.js';
import { streamLimitsSchema, targetsSchema } from './stream-schema.js';

/**
 * The `engine:` block's defaults for layers whose retry policy is `engine`: the `http` profile
 * (`ENGINE_PROFILES`, what `guardedFetch` ships) under every mapping left empty here, the
 * Guard's own for the rest (one source each; `resolveEngine` merges them).
 */
export const ENGINE_DEFAULTS: Readonly<Required<Omit<EngineConfig, 'headersTimeoutMs'>>> = Object.freeze({
  profile: DEFAULT_ENGINE_PROFILE,
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
  targets: {},
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

/** A non-streamed model call's wait for its answer: above 0 (the HTTP integrations check the same). */
const HEADERS_TIMEOUT_RANGE: Range = ABOVE_0;

// Naive and SDK retry counts are the harness's own (the engine's `maxAttempts` is in GUARD_RANGES).
const retries = () => intBetween(0, 100);
const attempts = () => intBetween(1, 100);

// Every range below is the engine's own table (the constructors check the same), so a mistake
// surfaces here with its path, in the engine's words, and the two cannot drift apart.
const STRATEGIES = BACKOFF_STRATEGIES as ['full_jitter', 'decorrelated_jitter', 'exponential'];

/** Each key of `ranges` as an optional number, or a duration for options in ms (`windowMs`). */
function rangedFields<K extends string>(ranges: Readonly<Record<K, Range>>) {
  return Object.fromEntries(
    Object.entries<Range>(ranges).map(([k, r]) => [k, (k.endsWith('Ms') ? durationIn(r) : inRangeOf(r)).optional()]),
  ) as unknown as Record<K, z.ZodOptional<z.ZodType<number>>>;
}

/** The breaker's trip ratios: in range, or `false` for "this trigger is off". */
const tripRatio = (range: Range) => {
  const what = `${rangeText(range)}, or false`;
  return switchOn<number | false>(
    what,
    (v) => (v === false ? z.literal(false) : typeof v === 'number' ? num(what, (n) => inRange(range, n)) : undefined),
    { anyOf: [{ const: false }, { type: 'number', ...rangeJson(range) }] },
  );
};

const backoff = () =>
  obj({ strategy: oneOf(STRATEGIES).optional(), ...rangedFields(BACKOFF_RANGES) }, 'a mapping of backoff options');

const retryBudget = () => obj(rangedFields(RETRY_BUDGET_RANGES));

const throttle = () => obj(rangedFields(ADAPTIVE_THROTTLE_RANGES));

const breaker = () => {
  const r = CIRCUIT_BREAKER_RANGES;
  return obj({
    ...rangedFields(r),
    failureRatio: tripRatio(r.failureRatio).optional(),
    slowCallRatio: tripRatio(r.slowCallRatio).optional(),
    throttledRatio: tripRatio(r.throttledRatio).optional(),
  });
};

const concurrency = () => obj(rangedFields(CONCURRENCY_LIMITER_RANGES));

const limit = () =>
  obj(
    {
      name: name('a limit name'),
      unit: oneOf(['requests', 'tokens']),
      rate: inRangeOf(LIMIT_RANGES.rate),
      per: oneOf(['second', 'minute']),
      // A requests limit's burst must also be at least 1: the engine says so, with the path.
      burst: inRangeOf(LIMIT_RANGES.tokenBurst).optional(),
      // Only keys a simulated call carries: any other would put every call in one bucket, unseen.
      keyBy: oneOf(LIMIT_KEYS).optional(),
    },
    'a limit like {name: rps, unit: requests, rate: 10, per: second}',
  );

/** Each engine option's schema, none defaulted. */
function engineFields() {
  return {
    profile: oneOf(ENGINE_PROFILE_NAMES),
    maxAttempts: inRangeOf(GUARD_RANGES.maxAttempts),
    backoff: backoff(),
    retryBudget: orFalse(retryBudget(), 'a mapping of retry budget options'),
    throttle: orFalse(throttle(), 'a mapping of throttle options'),
    breaker: orFalse(breaker(), 'a mapping of breaker options'),
    limits: z.array(limit(), { error: expecting('a list of limits') }),
    concurrency: orFalse(concurrency(), 'a mapping of concurrency options'),
    minAttemptMs: durationIn(GUARD_RANGES.minAttemptMs),
    state: oneOf(ENGINE_STATES),
    stream: streamLimitsSchema(),
    headersTimeoutMs: durationIn(HEADERS_TIMEOUT_RANGE),
    targets: targetsSchema(),
  };
}

/** The scenario's top-level `engine:` block, every option defaulted. */
export function engineSchema(): z.ZodType<EngineConfig> {
  const f = engineFields();
  const d = ENGINE_DEFAULTS;
  return obj(
    {
      profile: f.profile.default(d.profile),
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
      // Absent unless given: the profile's.
      headersTimeoutMs: f.headersTimeoutMs.optional(),
      // Absent unless given: every target takes the engine's limits.
      targets: f.targets.optional(),
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
  ).transform((r, ctx): RetryPolicy => {
    switch (r.policy) {
      case 'none':
        return { policy: 'none' };
      case 'naive':
        return { policy: 'naive', attempts: r.attempts ?? NAIVE_ATTEMPTS, backoff: { ...NAIVE_BACKOFF, ...r.backoff } };
      case 'sdk': {
        const sdk = r.sdk ?? 'openai';
        // The chosen policy's own keys must all count: no other SDK has a runner to retry (0,
        // no runner retries, is true of every SDK, so `--set` can turn them off for all variants).
        if (r.runnerRetries !== undefined && r.runnerRetries > 0 && sdk !== 'openai-agents') {
          ctx.issues.push({
            code: 'custom',
            path: ['runnerRetries'],
            input: r.runnerRetries,
            message: `only the openai-agents SDK has a runner that retries (this policy's sdk is ${sdk})`,
          });
          return z.NEVER;
        }
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
