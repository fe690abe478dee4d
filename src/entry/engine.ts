/**
 * `stormlab/engine`: the resilience engine for LLM and multi-agent backends. No runtime
 * dependencies. Every primitive takes time and randomness as inputs; `systemClock` and
 * `systemRandom()` are the production ones.
 *
 * This list is the public API: a name here is a promise to users, so add one on purpose.
 * The synchronous machinery the simulator drives (`GuardCore`, `GuardCall`, `Step`) and the
 * options resolvers stay internal: `Guard` holds a core rather than being one, so none of it
 * is reachable through a guard either (its API: run, runDetailed, snapshot, subscribe, name,
 * clock, targets).
 */

// The guard: everything composed behind `await guard.run(fn)`.
export { AttemptTimeoutError } from '../engine/guard.js';
// The engine's Guard with systemClock and systemRandom() as its defaults.
export { Guard } from '../platform/system-guard.js';
export type { AttemptContext, GuardResult, GuardView, RunOptions } from '../engine/guard.js';
export type { GuardSnapshot, StartOptions } from '../engine/guard-core.js';
export { GUARD_DEFAULTS } from '../engine/guard-options.js';
export type { GuardOptions } from '../engine/guard-options.js';
export type { GuardEvent, GuardEventType, GuardListener } from '../engine/guard-events.js';

// Targets (origins, models or both) and outcomes settled after the attempt returned (streams).
export type { Target, TargetOption, TargetSpec } from '../engine/target.js';
export type { AttemptOutcome, DeferredOutcome } from '../engine/deferred-outcome.js';

// Errors.
export { OptionError, SHED_REASONS, ShedError, StormlabError, StreamError } from '../engine/errors.js';
export type { ShedReason, StreamFault } from '../engine/errors.js';

// Time and randomness.
export type { Clock } from '../engine/clock.js';
export { ManualClock } from '../engine/manual-clock.js';
export { SeededRandom } from '../engine/random.js';
export type { Random } from '../engine/random.js';
export { preciseClock, systemClock } from '../platform/system-clock.js';
export { systemRandom } from '../platform/system-random.js';

// Classification of outcomes, and the headers it reads.
export { classify, classifyStatus, ERROR_CLASSES } from '../engine/classify.js';
export { refusalOf } from '../engine/refusal.js';
export type {
  AttemptResult,
  Classification,
  ErrorAction,
  ErrorClass,
} from '../engine/classify.js';
export { parseRetryAfter } from '../engine/retry-after.js';
export type { HeaderSource } from '../engine/headers.js';

// The primitives, usable on their own.
export { ADAPTIVE_THROTTLE_DEFAULTS, AdaptiveThrottle } from '../engine/adaptive-throttle.js';
export type { AdaptiveThrottleOptions } from '../engine/adaptive-throttle.js';
export { Backoff, BACKOFF_DEFAULTS, BACKOFF_STRATEGIES, planRetry } from '../engine/backoff.js';
export type { BackoffOptions, BackoffStrategy, RetryPlan } from '../engine/backoff.js';
export { BreakerSet } from '../engine/breaker-set.js';
export { CIRCUIT_BREAKER_DEFAULTS, CircuitBreaker } from '../engine/circuit-breaker.js';
export type {
  BreakerOutcome,
  BreakerSnapshot,
  BreakerState,
  BreakerTransition,
  CircuitBreakerOptions,
  TransitionCause,
  TripCause,
} from '../engine/circuit-breaker.js';
export { CONCURRENCY_LIMITER_DEFAULTS, ConcurrencyLimiter } from '../engine/concurrency-limiter.js';
export type { ConcurrencyLimiterOptions } from '../engine/concurrency-limiter.js';
export { Deadline } from '../engine/deadline.js';
export { FallbackChain } from '../engine/fallback-chain.js';
export type { FallbackTarget } from '../engine/fallback-chain.js';
export { Limiter, Reservation } from '../engine/limiter.js';
export type {
  LimitDimension,
  LimiterOptions,
  LimitRejection,
  ReserveRequest,
  ReserveResult,
} from '../engine/limiter.js';
export { RETRY_BUDGET_DEFAULTS, RetryBudget } from '../engine/retry-budget.js';
export type { RetryBudgetOptions } from '../engine/retry-budget.js';
export { TokenBucket } from '../engine/token-bucket.js';
export { WindowCounter } from '../engine/window-counter.js';

// Token estimates for the limiter's token dimensions.
export { charsPerToken, estimateChatTokens } from '../engine/token-estimator.js';
export type { ChatTokenRequest, TokenEstimator } from '../engine/token-estimator.js';

// Where state lives: implement `StateStore` to share it (stormlab/redis does).
export { MemoryStore } from '../engine/store.js';
export type { StateStore } from '../engine/store.js';
export type { BucketSpec, TokenBucketLike } from '../engine/token-bucket.js';
export type { WindowCounterLike, WindowSpec } from '../engine/window-counter.js';

// Idempotency keys bound to business intent.
export { idempotencyKey, parseIdempotencyKey } from '../engine/idempotency-key.js';
export type { IdempotencyKeyParts } from '../engine/idempotency-key.js';
export { MemoryIdempotencyStore } from '../engine/idempotency-store.js';
export type {
  BeginResult,
  IdempotencyRecord,
  IdempotencyStatus,
  IdempotencyStore,
  MemoryIdempotencyStoreOptions,
} from '../engine/idempotency-store.js';
export { IdempotencyFailedError, IdempotencyInProgressError, withIdempotency } from '../engine/with-idempotency.js';
export type { IdempotentResult, WithIdempotencyArgs } from '../engine/with-idempotency.js';
