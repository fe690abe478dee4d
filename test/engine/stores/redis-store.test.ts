import { once } from 'node:events';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { classifyStatus } from '../../../src/engine/classify.js';
import { coreOf, Guard } from '../../../src/engine/guard.js';
import { Limiter } from '../../../src/engine/limiter.js';
import { ManualClock } from '../../../src/engine/manual-clock.js';
import { SeededRandom } from '../../../src/engine/random.js';
import { RetryBudget } from '../../../src/engine/retry-budget.js';
import { MemoryStore, type StateStore } from '../../../src/engine/store.js';
import { RedisStore, type StoreEvent } from '../../../src/engine/stores/redis-store.js';
import type { SharedTokenBucket } from '../../../src/engine/stores/shared-token-bucket.js';
import { describeWithRedis, dropPrefix, REDIS_URL, testPrefix, testRedis } from '../../helpers/redis.js';

const T0 = 1_764_540_000_000; // an epoch time: processes share the timeline
let admin: Redis;
const opened: Redis[] = [];
const prefixes: string[] = [];

/** A "process": its own client and store on a shared prefix, syncing only when told. */
function processOn(
  prefix: string,
  clock: ManualClock,
  extra: Partial<ConstructorParameters<typeof RedisStore>[0]> = {},
  redis = testRedis(),
): RedisStore {
  opened.push(redis);
  return new RedisStore({ redis, clock, prefix, syncMs: 0, ...extra });
}

function newPrefix(tag: string): string {
  const p = testPrefix(tag);
  prefixes.push(p);
  return p;
}

await describeWithRedis('RedisStore', () => {
  beforeAll(() => {
    admin = testRedis();
  });

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((r) => r.quit().catch(() => r.disconnect())));
  });

  afterAll(async () => {
    for (const p of prefixes) await dropPrefix(admin, p);
    await admin.quit();
  });

  it('shares one retry budget between processes', async () => {
    const clock = new ManualClock(T0);
    const prefix = newPrefix('budget');
    const a = processOn(prefix, clock);
    const b = processOn(prefix, clock);
    const budgetA = new RetryBudget({ ratio: 0.1, minRetriesPerSec: 0 }, a, 'budget');
    const budgetB = new RetryBudget({ ratio: 0.1, minRetriesPerSec: 0 }, b, 'budget');
    for (let i = 0; i < 100; i++) budgetA.recordFirst(clock.now());
    expect(budgetB.canRetry(clock.now())).toBe(false); // b has seen no first attempt yet
    await a.sync();
    await b.sync();
    let retries = 0;
    while (budgetB.canRetry(clock.now()) && retries < 50) {
      budgetB.withdraw(clock.now());
      retries++;
    }
    expect(retries).toBe(10); // 0.1 × a's 100 first attempts
    expect(budgetA.canRetry(clock.now())).toBe(true); // a has not heard of b's retries yet
    await b.sync();
    await a.sync();
    expect(budgetA.canRetry(clock.now())).toBe(false);
  });

  it('keeps a shared limit near its capacity where separate processes would each take all of it', async () => {
    const clock = new ManualClock(T0);
    const take = async (stores: StateStore[], sync: boolean): Promise<number> => {
      const limiters = stores.map(
        (store) =>
          new Limiter({ dimensions: [{ name: 'rps', unit: 'requests', rate: 1e-9, per: 'second', burst: 20 }], store }),
      );
      let granted = 0;
      for (let round = 0; round < 20; round++) {
        for (const l of limiters) {
          for (let i = 0; i < 3; i++) {
            const r = l.reserve({}, clock.now());
            if (r.ok) granted++;
          }
        }
        if (sync) for (const s of stores) await (s as RedisStore).sync();
      }
      return granted;
    };
    const prefix = newPrefix('limit');
    const shared = [processOn(prefix, clock), processOn(prefix, clock)];
    const granted = await take(shared, true);
    const separate = await take([new MemoryStore(), new MemoryStore()], false);
    expect(separate).toBe(40);
    // Shares are worked out from levels a sync apart, so one round may overshoot by a take or two.
    expect(granted).toBeGreaterThanOrEqual(20);
    expect(granted).toBeLessThanOrEqual(22);
    // Redis conserves what was granted: level − debt = capacity − granted.
    const [key] = (await admin.keys(`${prefix}:b:*`)).filter((k) => !k.endsWith(':sharers'));
    const [t, o] = await admin.hmget(key, 't', 'o');
    expect(Number(t) - Number(o)).toBeCloseTo(20 - granted, 9);
  });

  it('splits a start-up burst: processes join a bucket on their first sync, before they draw', async () => {
    const clock = new ManualClock(T0);
    const prefix = newPrefix('join');
    const stores = [processOn(prefix, clock), processOn(prefix, clock)];
    const limiters = stores.map(
      (store) =>
        new Limiter({ dimensions: [{ name: 'tpm', unit: 'tokens', rate: 1e-9, per: 'minute', burst: 20_000 }], store }),
    );
    for (const s of [...stores, ...stores]) await s.sync(); // each has seen the other join
    const burst = limiters.map((l) => {
      let n = 0;
      while (n < 100 && l.reserve({ tokens: 1_000 }, clock.now()).ok) n++;
      return n;
    });
    expect(burst).toEqual([10, 10]);
  });

  it('leaves no debt for spending a process paced on its own share while it could not sync; a bucket Redis lost starts empty', async () => {
    for (const lost of [false, true]) {
      const clock = new ManualClock(T0);
      const prefix = newPrefix(lost ? 'lost' : 'kept');
      const a = processOn(prefix, clock);
      const limiter = new Limiter({
        dimensions: [{ name: 'rps', unit: 'requests', rate: 10, per: 'second' }],
        store: a,
      });
      await a.sync();
      // 5 s without a sync (Redis away): the local bucket (10, refilling 10/s) paces 60 takes.
      let granted = 0;
      for (let i = 0; i < 100; i++) {
        if (limiter.reserve({}, clock.now()).ok) granted++;
        clock.advance(50);
      }
      expect(granted).toBeGreaterThanOrEqual(59); // 10 + 5 s × 10/s, give or take float rounding
      expect(granted).toBeLessThanOrEqual(60);
      if (lost) await dropPrefix(admin, prefix);
      await a.sync();
      const [key] = (await admin.keys(`${prefix}:b:*`)).filter((k) => !k.endsWith(':sharers'));
      const [t, o] = await admin.hmget(key, 't', 'o');
      expect(Number(o)).toBe(0); // a capped refill would have credited one bucketful: 40 owed
      expect(Number(t)).toBeLessThanOrEqual(10);
      if (lost) {
        // Lost, not expired (synced 5 s ago, well inside its TTL): started again empty, so no
        // process gets a bucketful the others may have spent; the refill hands out the next.
        expect(Number(t)).toBe(0);
        expect(limiter.reserve({}, clock.now()).ok).toBe(false);
        clock.advance(100);
      }
      expect(limiter.reserve({}, clock.now()).ok).toBe(true); // no stall after the outage beyond one token's refill
    }
  });

  it('leaves buckets idle for longer than activeMs out of its syncs (a gateway may hold one per tenant)', async () => {
    const clock = new ManualClock(T0);
    const prefix = newPrefix('idle');
    const a = processOn(prefix, clock);
    const limiter = new Limiter({
      dimensions: [{ name: 'rps', unit: 'requests', rate: 10, per: 'second', keyBy: 'tenant' }],
      store: a,
    });
    for (let i = 0; i < 50; i++) limiter.reserve({ keys: { tenant: `t${i}` } }, clock.now());
    await a.sync();
    const lastSync = async (tenant: string): Promise<number> =>
      Number(
        await admin.hget(
          (await admin.keys(`${prefix}:b:limit:rps:${tenant}:*`)).find((k) => !k.endsWith(':sharers'))!,
          'l',
        ),
      );
    expect(await lastSync('t7')).toBe(T0);
    clock.advance(3_000);
    limiter.reserve({ keys: { tenant: 't7' } }, clock.now());
    await a.sync();
    expect(await lastSync('t7')).toBe(T0 + 3_000);
    expect(await lastSync('t8')).toBe(T0); // idle for 3 s: not synced
  });

  it('shares the counts behind the throttle and the breaker: failures seen by one process trip another', async () => {
    const clock = new ManualClock(T0);
    const prefix = newPrefix('guard');
    const random = new SeededRandom(7);
    const guard = () =>
      coreOf(new Guard({ clock, random, name: 'api', breaker: { minimumCalls: 10 }, store: processOn(prefix, clock) }));
    const a = guard();
    const b = guard();
    const failed = classifyStatus(503);
    for (let i = 0; i < 40; i++) {
      const call = a.start(clock.now());
      if (call.next(clock.now()) === 1) call.complete(failed, 5, -1, clock.now());
    }
    expect(b.throttles![0].dropProbability(clock.now())).toBe(0);
    await (a.store as RedisStore).sync();
    await (b.store as RedisStore).sync();
    expect(b.throttles![0].dropProbability(clock.now())).toBeGreaterThan(0.5);
    expect(b.breakers![0].state(clock.now())).toBe('closed'); // breaker state is per process...
    const call = b.start(clock.now());
    call.next(clock.now()); // may be throttled; then try until an attempt goes
    b.breakers![0].record(b.breakers![0].tryAcquire(clock.now()), 'success', 5, clock.now());
    expect(b.breakers![0].state(clock.now())).toBe('open'); // ...the failure ratio that trips it is shared
  });

  it('keeps deciding on local state while Redis is away, says so, and resyncs when it is back', async () => {
    const clock = new ManualClock(T0);
    const prefix = newPrefix('outage');
    const proxy = await redisProxy();
    const events: StoreEvent[] = [];
    const client = new Redis(proxy.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => 10,
    });
    await once(client, 'ready');
    const a = processOn(prefix, clock, { onEvent: (e) => events.push(e) }, client);
    const b = processOn(prefix, clock);
    const budgetA = new RetryBudget({ ratio: 0.1, minRetriesPerSec: 0 }, a, 'budget');
    const budgetB = new RetryBudget({ ratio: 0.1, minRetriesPerSec: 0 }, b, 'budget');
    await a.sync();
    expect(a.available).toBe(true);

    proxy.cut();
    await once(client, 'close');
    for (let i = 0; i < 30; i++) budgetA.recordFirst(clock.now());
    await a.sync();
    expect(a.available).toBe(false);
    expect(events).toEqual([
      { type: 'store_unavailable', at: T0, error: expect.stringMatching(/writeable|closed|connect/i) },
    ]);
    expect(budgetA.canRetry(clock.now())).toBe(true); // local state still decides

    clock.advance(1_500);
    proxy.restore();
    await once(client, 'ready');
    await a.sync();
    expect(a.available).toBe(true);
    expect(events[1]).toEqual({ type: 'store_recovered', at: T0 + 1_500, downMs: 1_500 });
    await b.sync();
    let retries = 0;
    while (budgetB.canRetry(clock.now()) && retries < 10) {
      budgetB.withdraw(clock.now());
      retries++;
    }
    expect(retries).toBe(3); // the 30 first attempts made during the outage reached Redis
    await proxy.close();
  });

  it('says it is unavailable when Redis is slow to answer, and counts a late answer once', async () => {
    const clock = new ManualClock(T0);
    const prefix = newPrefix('slow');
    const proxy = await redisProxy();
    const events: StoreEvent[] = [];
    const client = new Redis(proxy.url, { maxRetriesPerRequest: 0 });
    await once(client, 'ready');
    const a = processOn(prefix, clock, { timeoutMs: 500, onEvent: (e) => events.push(e) }, client);
    const budgetA = new RetryBudget({ ratio: 0.1, minRetriesPerSec: 0 }, a, 'budget');
    for (let i = 0; i < 20; i++) budgetA.recordFirst(clock.now());
    proxy.hold(); // requests reach the proxy and wait there
    const syncing = a.sync();
    await proxy.held();
    clock.advance(500);
    expect(events.map((e) => e.type)).toEqual(['store_unavailable']);
    proxy.release();
    await syncing;
    expect(events.map((e) => e.type)).toEqual(['store_unavailable', 'store_recovered']);
    await a.sync();
    const [key] = await admin.keys(`${prefix}:w:budget:*`);
    const values = Object.values(await admin.hgetall(key)).map(Number);
    expect(values.reduce((x, y) => x + y, 0)).toBe(20); // sent once, not again after the timeout
    await proxy.close();
  });

  it('tells a bucket Redis lost from one that expired: idle past its TTL it is new (full); lost, the sharers it knew stay a floor', async () => {
    const clock = new ManualClock(T0);
    const spec = { dimensions: [{ name: 'rps', unit: 'requests' as const, rate: 10, per: 'second' as const }] };
    // Idle 61 s (the key's TTL is 60 s): the key expiring is no loss; the bucket comes back full.
    const idle = newPrefix('expired');
    const a = processOn(idle, clock);
    const limiter = new Limiter({ ...spec, store: a });
    await a.sync();
    clock.advance(61_000);
    await dropPrefix(admin, idle);
    limiter.reserve({}, clock.now());
    await a.sync();
    const [key] = (await admin.keys(`${idle}:b:*`)).filter((k) => !k.endsWith(':sharers'));
    expect(Number(await admin.hget(key, 't'))).toBe(9);
    // Two sharers, then Redis loses everything: the first back still counts two for activeMs
    // (2 s), so it refills at half the rate, not the whole of it while the other is away.
    const lost = newPrefix('floor');
    const [p, q] = [processOn(lost, clock), processOn(lost, clock)];
    const buckets = [p, q].map((s) => s.tokenBucket('rps', { capacity: 10, refillPerSec: 10 }) as SharedTokenBucket);
    for (const s of [p, q, p, q]) await s.sync();
    expect(buckets.map((b) => b.share)).toEqual([2, 2]);
    await dropPrefix(admin, lost);
    clock.advance(100);
    await p.sync();
    expect(buckets[0].share).toBe(2);
    expect(buckets[0].available(clock.now())).toBe(0);
    expect(buckets[0].waitMs(1, clock.now())).toBeCloseTo(200, 6);
    clock.advance(2_000);
    expect(buckets[0].tryTake(1, clock.now())).toBe(true);
    await p.sync();
    expect(buckets[0].share).toBe(1); // the floor is gone: q has not come back
  });

  it('the rejoin bound: after a loss, processes that synced before get the refill only; a never-synced one first back starts the bucket full (one bucketful more, at most)', async () => {
    // A 10-token bucket refilling 10/s, shared by a (synced before the loss) and n (started
    // after it, never synced). Greedy: each takes all it can, syncing every 100 ms, for 1 s.
    const granted = async (firstBack: 'a' | 'n'): Promise<number> => {
      const clock = new ManualClock(T0);
      const prefix = newPrefix(`rejoin-${firstBack}`);
      const a = processOn(prefix, clock);
      const ba = a.tokenBucket('rps', { capacity: 10, refillPerSec: 10 }) as SharedTokenBucket;
      await a.sync();
      while (ba.tryTake(1, clock.now())); // a spent its bucketful before Redis went
      await a.sync();
      await dropPrefix(admin, prefix); // Redis restarts empty
      clock.advance(100);
      const n = processOn(prefix, clock);
      const bn = n.tokenBucket('rps', { capacity: 10, refillPerSec: 10 }) as SharedTokenBucket;
      for (const s of firstBack === 'a' ? [a, n] : [n, a]) await s.sync();
      let got = 0;
      for (let tick = 0; tick < 10; tick++) {
        for (const b of [ba, bn]) while (b.tryTake(1, clock.now())) got++;
        clock.advance(100);
        for (const s of [a, n]) await s.sync();
      }
      return got;
    };
    // The refill of 1 s is 10 tokens; shares worked out a sync apart may overshoot by about a sync's worth.
    const rejoinedFirst = await granted('a');
    expect(rejoinedFirst).toBeGreaterThanOrEqual(8);
    expect(rejoinedFirst).toBeLessThanOrEqual(10 + 2);
    // n cannot tell a lost bucket from a new one: first back, it starts it full, as on first use.
    const freshFirst = await granted('n');
    expect(freshFirst).toBeGreaterThan(10 + 2);
    expect(freshFirst).toBeLessThanOrEqual(10 + 10 + 2);
  });

  it('sends what is left when closed, and keeps the client open', async () => {
    const clock = new ManualClock(T0);
    const prefix = newPrefix('close');
    const a = processOn(prefix, clock);
    const budget = new RetryBudget({}, a, 'budget');
    budget.recordFirst(clock.now());
    await a.close();
    const [key] = await admin.keys(`${prefix}:w:budget:*`);
    expect(Object.values(await admin.hgetall(key)).map(Number)).toEqual([1]);
    expect(opened[0].status).toBe('ready');
  });

  it('refuses one key with two settings in a process; other settings elsewhere use other Redis keys', async () => {
    const clock = new ManualClock(T0);
    const prefix = newPrefix('spec');
    const a = processOn(prefix, clock);
    const b = processOn(prefix, clock);
    a.windowCounter('k', { windowMs: 10_000, buckets: 10, fields: 2 });
    expect(() => a.windowCounter('k', { windowMs: 20_000, buckets: 10, fields: 2 })).toThrow(
      /store key "k" is already used with other settings/,
    );
    const wa = a.windowCounter('k', { windowMs: 10_000, buckets: 10, fields: 2 });
    const wb = b.windowCounter('k', { windowMs: 20_000, buckets: 10, fields: 2 });
    wa.add(0, 1, clock.now());
    await a.sync();
    await b.sync();
    expect(wb.total(0, clock.now())).toBe(0);
  });

  it('names what is wrong with its options', () => {
    const clock = new ManualClock(T0);
    const redis = testRedis();
    opened.push(redis);
    expect(() => new RedisStore({ redis: {} as Redis, clock })).toThrow('redisStore.redis must be an ioredis client');
    expect(() => new RedisStore({ redis, clock, syncMs: -5 })).toThrow(/redisStore\.syncMs/);
    expect(() => new RedisStore({ redis, clock, prefix: '' })).toThrow(/redisStore\.prefix/);
    expect(() => new RedisStore({ redis, clock, syncMs: 1000, activeMs: 1500 })).toThrow(
      'redisStore.activeMs must be at least twice redisStore.syncMs (1000), got 1500',
    );
    expect(() => new RedisStore({ redis, clock: undefined as never })).toThrow('redisStore.clock must be a Clock');
  });
});

/**
 * A TCP proxy to the test Redis on port 0 that a test can cut (refuse and drop connections),
 * restore, or hold (keep what clients send until released).
 */
async function redisProxy(): Promise<{
  url: string;
  cut(): void;
  restore(): void;
  hold(): void;
  held(): Promise<void>;
  release(): void;
  close(): Promise<void>;
}> {
  const target = new URL(REDIS_URL);
  const sockets = new Set<Socket>();
  let open = true;
  let holding = false;
  const queued: Array<() => void> = [];
  let onHeld: (() => void) | undefined;
  const server: Server = createServer((client) => {
    if (!open) return client.destroy();
    const upstream = connect(Number(target.port || 6379), target.hostname);
    sockets.add(client).add(upstream);
    client.on('data', (chunk) => {
      const send = (): void => void upstream.write(chunk);
      if (!holding) return send();
      queued.push(send);
      onHeld?.();
    });
    upstream.on('data', (chunk) => client.write(chunk));
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', drop).on('error', drop);
    upstream.on('close', drop).on('error', drop);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  return {
    url: `redis://127.0.0.1:${port}`,
    cut() {
      open = false;
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    restore() {
      open = true;
    },
    hold() {
      holding = true;
    },
    held() {
      return queued.length > 0 ? Promise.resolve() : new Promise((r) => (onHeld = r));
    },
    release() {
      holding = false;
      for (const send of queued.splice(0)) send();
    },
    async close() {
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}
