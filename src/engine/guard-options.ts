import type { AdaptiveThrottleOptions } from './adaptive-throttle.js';
import type { BackoffOptions } from './backoff.js';
import type { CircuitBreakerOptions } from './circuit-breaker.js';
import type { Clock } from './clock.js';
import type { ConcurrencyLimiterOptions } from './concurrency-limiter.js';
import type { GuardListener } from './guard-events.js';
import type { IdempotencyStore } from './idempotency-store.js';
import type { LimitDimension } from './limiter.js';
import { ABOVE_0, AT_LEAST_0, checkNonEmptyString, checkOneOf, checkRanges, type Range } from './options.js';
import { OptionError } from './errors.js';
import type { Random } from './random.js';
import type { RetryBudgetOptions } from './retry-budget.js';
import type { StateStore } from './store.js';
import { resolveTargets, type Target, type TargetOption } from './target.js';

export interface GuardOptions {
  /**
   * Where time comes from: a virtual clock in the simulator, a `ManualClock` in tests.
   * @default systemClock with the `Guard` of `stormlab/engine`; the core classes need one
   */
  clock?: Clock;
  /** Where jitter and throttle draws come from. @default systemRandom() with the `Guard` of `stormlab/engine` */
  random?: Random;
  /** Where budget, throttle, breaker and bucket state lives. @default a new MemoryStore */
  store?: StateStore;
  /** Prefix of every store key, so several guards can share a store. @default 'guard' */
  name?: string;
  /**
   * The fallback chain in order, primary first: names, or targets with an origin, a model, a
   * context window (see `TargetSpec`). Each target has its own breaker and throttle, keyed by
   * origin + model. @default ['default']
   */
  targets?: readonly TargetOption[];
  /** Attempts per target, the first included. 1 = never retry. @default 3 */
  maxAttempts?: number;
  /** Backoff between attempts; `retry-after` from the upstream is a lower bound. */
  backoff?: Partial<BackoffOptions>;
  /** Retry budget shared by the guard's calls; `false` turns it off. @default on, ratio 0.1 */
  retryBudget?: Partial<RetryBudgetOptions> | false;
  /** SRE adaptive throttle, one per target; `false` turns it off. @default on, K = 2 */
  throttle?: Partial<AdaptiveThrottleOptions> | false;
  /** Circuit breaker, one per target; `false` turns it off. @default on */
  breaker?: Partial<CircuitBreakerOptions> | false;
  /** Token-bucket dimensions (requests/s, tokens/min, ...); reserved per attempt. @default none */
  limits?: LimitDimension[];
  /** Concurrency limit with a bounded queue, per guard, held per attempt. @default off */
  concurrency?: Partial<ConcurrencyLimiterOptions> | false;
  /** Deadline for a whole call when the caller gives none. @default Infinity */
  timeoutMs?: number;
  /** Longest a single attempt may take (it is also cut short by the call's deadline). @default Infinity */
  attemptTimeoutMs?: number;
  /** No attempt starts, and no backoff wait begins, with less than this left of the deadline. @default 0 */
  minAttemptMs?: number;
  /**
   * What a timed-out attempt (`timeout`, `stream_stall`) does: `'fallback'` moves to the next
   * available target at once (a silent provider is rarely silent for one request only), and
   * retries on the same target only when there is none; `'retry'` retries on the same target
   * first, like any retryable error. @default 'fallback'
   */
  onTimeout?: 'fallback' | 'retry';
  /**
   * What a content-filter refusal does: `'fail'` ends the call with the provider's answer
   * (its reason in `call.last.reason`); `'fallback'` tries the next target (another
   * provider's policy may differ). Never retried on the same target. @default 'fail'
   */
  onContentFilter?: 'fail' | 'fallback';
  /** Idempotency for calls that pass an `idempotencyKey`. @default off */
  idempotency?: { store: IdempotencyStore; leaseMs?: number };
  /** Receives every `GuardEvent`. Costs nothing when absent. */
  onEvent?: GuardListener;
}

export interface ResolvedGuardOptions
  extends Required<
    Omit<GuardOptions, 'store' | 'idempotency' | 'onEvent' | 'backoff' | 'targets' | 'clock' | 'random'>
  > {
  clock: Clock;
  random: Random;
  backoff: Partial<BackoffOptions>;
  targets: readonly Target[];
}

export const GUARD_DEFAULTS = {
  name: 'guard',
  targets: ['default'],
  maxAttempts: 3,
  retryBudget: {},
  throttle: {},
  breaker: {},
  limits: [],
  concurrency: false,
  timeoutMs: Infinity,
  attemptTimeoutMs: Infinity,
  minAttemptMs: 0,
  onTimeout: 'fallback',
  onContentFilter: 'fail',
} as const;

/** The guard's own number options' ranges, checked by `resolveGuardOptions` and by the scenario schema. */
export const GUARD_RANGES = Object.freeze({
  maxAttempts: { min: 1, max: 100, integer: true },
  timeoutMs: ABOVE_0,
  attemptTimeoutMs: ABOVE_0,
  minAttemptMs: AT_LEAST_0,
}) satisfies Record<string, Range>;

export const ON_TIMEOUT = ['fallback', 'retry'] as const;
export const ON_CONTENT_FILTER = ['fail', 'fallback'] as const;

/** Fills defaults and checks the guard's own options (each primitive checks its own). */
export function resolveGuardOptions(o: GuardOptions): ResolvedGuardOptions {
  if (o === null || typeof o !== 'object')
    throw new OptionError(`guard options must be an object, got ${o === null ? 'null' : typeof o}`, 'guard');
  if (typeof o.clock?.now !== 'function')
    throw new OptionError(
      `guard.clock must be a Clock (use systemClock), got ${o.clock === undefined ? 'undefined' : typeof o.clock}`,
      'guard.clock',
    );
  if (typeof o.random?.next !== 'function')
    throw new OptionError(
      `guard.random must be a Random (use systemRandom()), got ${o.random === undefined ? 'undefined' : typeof o.random}`,
      'guard.random',
    );
  const r = {
    clock: o.clock,
    random: o.random,
    name: o.name ?? GUARD_DEFAULTS.name,
    targets: resolveTargets(o.targets ?? GUARD_DEFAULTS.targets),
    maxAttempts: o.maxAttempts ?? GUARD_DEFAULTS.maxAttempts,
    backoff: o.backoff ?? {},
    retryBudget: o.retryBudget ?? GUARD_DEFAULTS.retryBudget,
    throttle: o.throttle ?? GUARD_DEFAULTS.throttle,
    breaker: o.breaker ?? GUARD_DEFAULTS.breaker,
    limits: o.limits ?? [...GUARD_DEFAULTS.limits],
    concurrency: o.concurrency ?? GUARD_DEFAULTS.concurrency,
    timeoutMs: o.timeoutMs ?? GUARD_DEFAULTS.timeoutMs,
    attemptTimeoutMs: o.attemptTimeoutMs ?? GUARD_DEFAULTS.attemptTimeoutMs,
    minAttemptMs: o.minAttemptMs ?? GUARD_DEFAULTS.minAttemptMs,
    onTimeout: o.onTimeout ?? GUARD_DEFAULTS.onTimeout,
    onContentFilter: o.onContentFilter ?? GUARD_DEFAULTS.onContentFilter,
  };
  checkNonEmptyString('guard.name', r.name);
  checkRanges('guard', r, GUARD_RANGES);
  checkOneOf('guard.onTimeout', r.onTimeout, ON_TIMEOUT);
  checkOneOf('guard.onContentFilter', r.onContentFilter, ON_CONTENT_FILTER);
  return r;
}
