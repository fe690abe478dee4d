import { randomUUID } from 'node:crypto';
import type { IdempotencyStore } from '../../engine/idempotency-store.js';
import { RedisIdempotencyStore } from '../../engine/stores/redis-idempotency-store.js';
import { loadPeer } from '../../integrations/optional-peer.js';
import type { Scenario } from '../../scenario/scenario.js';
import { UsageError, type Io } from '../io.js';

/** Where `idempotency: redis` finds Redis when `REDIS_URL` is not set. */
const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** A live variant's idempotency store, and how to let go of it. */
export interface LiveIdempotency {
  store: IdempotencyStore;
  close(): void;
}

/**
 * The idempotency store of a live variant whose scenario says `idempotency: redis`: a
 * `RedisIdempotencyStore` at `REDIS_URL`, its keys under
 * `stormlab:idem:<scenario>:<run id>:<variant>` — the run id is `STORMLAB_RUN_ID` when set (so
 * every process of one run shares the keys) and fresh otherwise (so a re-run does not find the
 * last run's receipts). Undefined for `idempotency: service` (the tool service keeps the keys).
 */
export async function liveIdempotency(
  io: Io,
  scenario: Scenario,
  variant: string,
): Promise<LiveIdempotency | undefined> {
  if (scenario.idempotency !== 'redis') return undefined;
  const url = io.env.REDIS_URL ?? DEFAULT_REDIS_URL;
  const { Redis } = await loadPeer('ioredis', 'idempotency: redis', () => import('ioredis'));
  const redis = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 2000, lazyConnect: true });
  // A client's connection errors are events: without a listener ioredis prints each with a
  // stack ("[ioredis] Unhandled error event"). The first says why it could not connect; later
  // ones (Redis lost mid-run) fail the store's calls, each with its own error, not the process.
  let why: string | undefined;
  redis.on('error', (e: NodeJS.ErrnoException) => {
    why ??= e.code ?? e.message;
  });
  try {
    await redis.connect();
  } catch (e) {
    redis.disconnect();
    throw new UsageError(
      `${scenario.source}: idempotency: redis, but no Redis answers at ${url} (${why ?? (e instanceof Error ? e.message : String(e))}); set REDIS_URL`,
    );
  }
  const run = io.env.STORMLAB_RUN_ID ?? randomUUID();
  const prefix = `stormlab:idem:${scenario.name}:${run}:${variant}`;
  return { store: new RedisIdempotencyStore({ redis, prefix }), close: () => redis.disconnect() };
}
