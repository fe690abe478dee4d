/**
 * `stormlab/engine`: the resilience engine for LLM and multi-agent backends. No runtime
 * dependencies. Every primitive takes time and randomness as inputs; `systemClock` and
 * `systemRandom()` are the production ones.
 */
export * from '../engine/adaptive-throttle.js';
export * from '../engine/backoff.js';
export * from '../engine/breaker-set.js';
export * from '../engine/circuit-breaker.js';
export * from '../engine/classify.js';
export * from '../engine/clock.js';
export * from '../engine/concurrency-limiter.js';
export * from '../engine/deadline.js';
export * from '../engine/errors.js';
export * from '../engine/fallback-chain.js';
export * from '../engine/guard.js';
export * from '../engine/guard-call.js';
export * from '../engine/guard-core.js';
export * from '../engine/guard-events.js';
export * from '../engine/guard-options.js';
export * from '../engine/headers.js';
export * from '../engine/idempotency-key.js';
export * from '../engine/idempotency-store.js';
export * from '../engine/limiter.js';
export * from '../engine/manual-clock.js';
export * from '../engine/random.js';
export * from '../engine/retry-after.js';
export * from '../engine/retry-budget.js';
export * from '../engine/store.js';
export * from '../engine/token-bucket.js';
export * from '../engine/token-estimator.js';
export * from '../engine/window-counter.js';
export * from '../engine/with-idempotency.js';
export * from '../engine/deferred-outcome.js';
export * from '../engine/target.js';
export * from '../engine/refusal.js';
// The engine's Guard with systemClock and systemRandom() as defaults (shadows the star export above).
export { Guard } from '../platform/system-guard.js';
export { preciseClock, systemClock } from '../platform/system-clock.js';
export { systemRandom } from '../platform/system-random.js';
