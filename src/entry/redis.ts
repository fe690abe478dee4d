/**
 * `stormlab/redis`: engine state shared by many processes through Redis (ioredis).
 * `new RedisStore({ redis, clock })` is a `StateStore`: pass it as a guard's `store` and the
 * retry budget, throttle and breaker windows and the limiter's buckets are shared.
 */
export { RedisStore, type RedisStoreOptions, type StoreEvent } from '../engine/stores/redis-store.js';
export { SharedTokenBucket, type BucketDeltas, type SharedLevel } from '../engine/stores/shared-token-bucket.js';
export { SharedWindowCounter, type BucketCounts, type WindowDeltas } from '../engine/stores/shared-window-counter.js';
export { RedisIdempotencyStore, type RedisIdempotencyStoreOptions } from '../engine/stores/redis-idempotency-store.js';
export { StoreUnavailableError } from '../engine/stores/store-unavailable-error.js';
