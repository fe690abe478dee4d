import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore } from '../../../src/engine/stores/redis-store.js';
import type { TokenBucketLike } from '../../../src/engine/token-bucket.js';
import { systemClock } from '../../../src/platform/system-clock.js';
import { ownRedis } from '../../helpers/redis-server.js';

// Redis killed and restarted empty, for real: a redis-server of this file's own (port 6391),
// real time (the store syncs on its timer). Every wait is bounded; the server dies in afterAll.
const redis = ownRedis(6391);
const clients: Redis[] = [];

/** A client as a user makes one (ioredis defaults: it queues commands while it reconnects), its errors heard. */
function client(): Redis {
  const c = new Redis(redis.url);
  c.on('error', () => {});
  clients.push(c);
  return c;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(() => redis.start(), 20_000);
afterAll(async () => {
  for (const c of clients.splice(0)) c.disconnect();
  await redis.stop();
});

describe('RedisStore when Redis goes away', () => {
  it('close() returns within timeoutMs though Redis is gone (the last sync is given up)', async () => {
    const store = new RedisStore({
      redis: client(),
      clock: systemClock,
      prefix: 'loss:close',
      syncMs: 0,
      timeoutMs: 300,
    });
    store.tokenBucket('b', { capacity: 10, refillPerSec: 1 }).tryTake(1, systemClock.now());
    await store.sync();
    expect(store.available).toBe(true);
    await redis.kill();
    try {
      store.tokenBucket('b', { capacity: 10, refillPerSec: 1 }).tryTake(1, systemClock.now());
      const started = performance.now();
      await store.close();
      const took = performance.now() - started;
      expect(took).toBeGreaterThanOrEqual(250);
      expect(took).toBeLessThan(300 + 700);
    } finally {
      await redis.start();
    }
  }, 30_000);

  it('a shared bucket does not hand out a fresh full burst when Redis comes back empty', async () => {
    // A big bucket against its refill: a second bucketful after the restart would be plain to see.
    const capacity = 400;
    const rate = 100; // tokens/s
    const stores = Array.from(
      { length: 4 },
      (_, i) =>
        new RedisStore({
          redis: client(),
          clock: systemClock,
          prefix: 'loss:bucket',
          id: `p${i}`,
          syncMs: 50,
          timeoutMs: 200,
          activeMs: 400,
        }),
    );
    const buckets: TokenBucketLike[] = stores.map((s) => s.tokenBucket('rpm', { capacity, refillPerSec: rate }));
    // Twice round: the first sync counts every process among the sharers, the second tells each.
    for (let round = 0; round < 2; round++) for (const s of stores) await s.sync();
    const granted: number[] = [];
    // Each process takes all its share lets it, every 2 ms: a greedy client per process, so the
    // bucket is empty from the first second on and each second after may hand out its refill only.
    const drive = setInterval(() => {
      const now = systemClock.now();
      for (const b of buckets) while (b.tryTake(1, now)) granted.push(now);
    }, 2);
    try {
      const t0 = systemClock.now();
      await sleep(1500);
      await redis.kill();
      await sleep(400); // each process paces itself on its last share meanwhile
      await redis.start(); // empty: the bucket and its sharers are gone
      const back = systemClock.now();
      await sleep(2000);
      const end = systemClock.now();
      const within = (from: number, to: number) => granted.filter((t) => t >= from && t < to).length;
      const refill = (from: number, to: number) => (rate * (to - from + 2)) / 1000; // + one tick of slack
      expect(within(t0, t0 + 1000)).toBeGreaterThanOrEqual(capacity); // the first bucketful went at once
      const rejoin = within(back, back + 1000) / refill(back, back + 1000);
      const whole = within(t0 + 1000, end) / refill(t0 + 1000, end);
      const after = within(back + 1000, end) / refill(back + 1000, end);
      console.log(
        `granted ÷ refill: the second after Redis came back empty ${(rejoin * 100).toFixed(1)} %, ` +
          `from the first second to the end ${(whole * 100).toFixed(1)} %, the last second ${(after * 100).toFixed(1)} %`,
      );
      expect(stores.every((s) => s.available)).toBe(true);
      expect(rejoin).toBeLessThanOrEqual(1.15);
      expect(whole).toBeLessThanOrEqual(1.1);
      // Not starved either: once every process is back, the refill is handed out.
      expect(after).toBeGreaterThan(0.7);
    } finally {
      clearInterval(drive);
      await Promise.all(stores.map((s) => s.close()));
    }
  }, 30_000);
});
