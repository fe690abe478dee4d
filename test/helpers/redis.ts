import { Redis } from 'ioredis';

/** Where the tests' Redis answers: `REDIS_URL`, or the local default `.ci/run` makes sure of. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

let made = 0;

/**
 * A key prefix no other test (or test run) uses: this process, a counter and a tag. Every
 * Redis test works under its own prefix and deletes it when done (`dropPrefix`).
 */
export function testPrefix(tag: string): string {
  return `stormlab-test:${process.pid}:${++made}:${tag}`;
}

/** A client for tests: fails fast rather than queueing when Redis is away. */
export function testRedis(url = REDIS_URL): Redis {
  return new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 2000, lazyConnect: false });
}

/** Deletes every key under `prefix` (SCAN, not KEYS, so a shared Redis is not blocked). */
export async function dropPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}
