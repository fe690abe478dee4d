import { connect } from 'node:net';
import { Redis } from 'ioredis';
import { describe, it } from 'vitest';

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

/** CI sets this (`.ci/run`): there, a Redis that does not answer fails the Redis tests instead of skipping them. */
const REQUIRED = process.env.STORMLAB_REQUIRE_REDIS === '1';

/** Whether something answers PING with PONG at `url` within a second. */
export function redisAnswers(url = REDIS_URL): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(u.port || 6379), u.hostname);
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), 1000);
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => done(String(d).includes('PONG')));
    socket.on('error', () => done(false));
  });
}

/**
 * `describe` for tests that need a Redis: when none answers at REDIS_URL the suite is skipped
 * with the reason (so `npm test` works on a machine without Redis), unless
 * STORMLAB_REQUIRE_REDIS=1 makes that a failure. Await it at the top level of the test file.
 */
export async function describeWithRedis(name: string, body: () => void): Promise<void> {
  if (await redisAnswers()) return void describe(name, body);
  if (REQUIRED) {
    describe(name, () => {
      it('needs Redis', () => {
        throw new Error(`STORMLAB_REQUIRE_REDIS=1 but no Redis answers at ${REDIS_URL} (redis-server --daemonize yes)`);
      });
    });
    return;
  }
  describe.skip(`${name} (no Redis answers at ${REDIS_URL}; STORMLAB_REQUIRE_REDIS=1 makes this a failure)`, body);
}
