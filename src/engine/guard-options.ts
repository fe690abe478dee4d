import type { AdaptiveThrottleOptions } from './adaptive-throttle.js';
import type { BackoffOptions } from './backoff.js';
import type { CircuitBreakerOptions } from './circuit-breaker.js';
import type { Clock } from './clock.js';
import type { ConcurrencyLimiterOptions } from './concurrency-limiter.js';
import type { GuardListener } from './guard-events.js';
import type { IdempotencyStore } from './idempotency-store.js';
import type { LimitDimension } from './limiter.js';
import { checkInteger, checkNonEmptyString, checkNumber } from './options.js';
import { OptionError } from './errors.js';
import type { Random } from './random.js';
import type { RetryBudgetOptions } from './retry-budget.js';
import type { StateStore } from './store.js';

export interface GuardOptions {
  /** Where time comes from: `systemClock` in production, a virtual clock in the simulator. */
  clock: Clock;
  /** Where jitter and throttle draws come from. */
  random: Random;
  /** Where budget, throttle, breaker and bucket state lives. @default a new MemoryStore */
  store?: StateStore;
  /** Prefix of every store key, so several guards can share a store. @default 'guard' */
  name?: string;
  /** The fallback chain: target names in order (models, base URLs). @default ['default'] */
  targets?: string[];
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
  /** Idempotency for calls that pass an `idempotencyKey`. @default off */
  idempotency?: { store: IdempotencyStore; leaseMs?: number };
  /** Receives every `GuardEvent`. Costs nothing when absent. */
  onEvent?: GuardListener;
}

export interface ResolvedGuardOptions
  extends Required<Omit<GuardOptions, 'store' | 'idempotency' | 'onEvent' | 'backoff'>> {
  backoff: Partial<BackoffOptions>;
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
} as const;

/** Fills defaults and checks the guard's own options (each primitive checks its own). */
export function resolveGuardOptions(o: GuardOptions): ResolvedGuardOptions {
  if (!o || typeof o.clock?.now !== 'function')
    throw new OptionError(
      `guard.clock must be a Clock (use systemClock), got ${o?.clock === undefined ? 'undefined' : typeof o.clock}`,
    );
  if (typeof o.random?.next !== 'function')
    throw new OptionError(
      'guard.random must be a Random (use systemRandom()), got ' +
        (o.random === undefined ? 'undefined' : typeof o.random),
    );
  const r = {
    clock: o.clock,
    random: o.random,
    name: o.name ?? GUARD_DEFAULTS.name,
    targets: o.targets ?? [...GUARD_DEFAULTS.targets],
    maxAttempts: o.maxAttempts ?? GUARD_DEFAULTS.maxAttempts,
    backoff: o.backoff ?? {},
    retryBudget: o.retryBudget ?? GUARD_DEFAULTS.retryBudget,
    throttle: o.throttle ?? GUARD_DEFAULTS.throttle,
    breaker: o.breaker ?? GUARD_DEFAULTS.breaker,
    limits: o.limits ?? [],
    concurrency: o.concurrency ?? GUARD_DEFAULTS.concurrency,
    timeoutMs: o.timeoutMs ?? GUARD_DEFAULTS.timeoutMs,
    attemptTimeoutMs: o.attemptTimeoutMs ?? GUARD_DEFAULTS.attemptTimeoutMs,
    minAttemptMs: o.minAttemptMs ?? GUARD_DEFAULTS.minAttemptMs,
  };
  checkNonEmptyString('guard.name', r.name);
  if (!Array.isArray(r.targets) || r.targets.length === 0)
    throw new OptionError(`guard.targets must be a non-empty array of names, got ${JSON.stringify(r.targets)}`);
  r.targets.forEach((t, i) => checkNonEmptyString(`guard.targets[${i}]`, t));
  if (new Set(r.targets).size !== r.targets.length)
    throw new OptionError(`guard.targets must not repeat a name, got ${JSON.stringify(r.targets)}`);
  checkInteger('guard.maxAttempts', r.maxAttempts, 1, 100);
  checkNumber('guard.timeoutMs', r.timeoutMs, 0, Infinity, { minExclusive: true });
  checkNumber('guard.attemptTimeoutMs', r.attemptTimeoutMs, 0, Infinity, { minExclusive: true });
  checkNumber('guard.minAttemptMs', r.minAttemptMs, 0);
  return r;
}
