import { createServer } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { MemoryIdempotencyStore, type IdempotencyStore } from '../../../src/engine/idempotency-store.js';
import { RedisIdempotencyStore } from '../../../src/engine/stores/redis-idempotency-store.js';
import { EXPIRY_MARGIN_MS } from '../../../src/engine/stores/idempotency-scripts.js';
import { StoreUnavailableError } from '../../../src/engine/stores/store-unavailable-error.js';
import { IdempotencyInProgressError, withIdempotency } from '../../../src/engine/with-idempotency.js';
import { ManualClock } from '../../../src/engine/manual-clock.js';
import { SeededRandom } from '../../../src/engine/random.js';
import { OptionError, StormlabError } from '../../../src/engine/errors.js';
import { describeWithRedis, dropPrefix, testPrefix, testRedis } from '../../helpers/redis.js';
import { idempotencyStoreContract, KEYS, OWNERS, op } from './idempotency-store-contract.js';

// Two clients stand for two processes sharing one Redis.
let a: Redis;
let b: Redis;
let prefixes: string[] = [];

/** A prefix for this test only; every one made is dropped after the test. */
function prefix(tag: string): string {
  const p = testPrefix(tag);
  prefixes.push(p);
  return p;
}

await describeWithRedis('RedisIdempotencyStore', () => {
  beforeAll(() => {
    a = testRedis();
    b = testRedis();
  });

  afterEach(async () => {
    for (const p of prefixes) await dropPrefix(a, p);
    prefixes = [];
  });

  afterAll(async () => {
    await Promise.all([a.quit(), b.quit()]);
  });

  idempotencyStoreContract({
    make: (options) => new RedisIdempotencyStore({ redis: a, ...options, prefix: prefix('contract') }),
    modelRuns: 300,
  });

  it('answers exactly as the memory store does, step by step (differential, fractional times)', async () => {
    const step = fc.tuple(op, fc.constantFrom(0, 0.1, 0.25, 1 / 3));
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 20, maxLength: 60 }),
        fc.integer({ min: 1, max: 200 }),
        fc.constantFrom(0, 1_764_540_000_000.5),
        async (steps, ttlMs, start) => {
          const memory = new MemoryIdempotencyStore({ ttlMs });
          // Half the steps go through the second client: both processes must see one store.
          const redis = [
            new RedisIdempotencyStore({ redis: a, ttlMs, prefix: prefix('diff') }),
            undefined as unknown as IdempotencyStore,
          ];
          redis[1] = new RedisIdempotencyStore({ redis: b, ttlMs, prefix: (redis[0] as RedisIdempotencyStore).prefix });
          let now = start;
          let i = 0;
          for (const [o, frac] of steps) {
            if (o.t === 'advance') {
              now += o.ms + frac;
              continue;
            }
            const k = KEYS[o.k];
            const who = OWNERS[o.o];
            const run = async (s: IdempotencyStore): Promise<unknown> => {
              if (o.t === 'begin') return s.begin(k, who, o.lease + frac, now);
              if (o.t === 'succeed') return s.succeed(k, who, { by: who, at: now, list: [frac] }, now);
              if (o.t === 'fail') return s.fail(k, who, { error: `e@${now}`, retryable: o.retryable }, now);
              return s.renew(k, who, o.lease + frac, now);
            };
            const r = redis[i++ % 2];
            expect(await run(r)).toStrictEqual(await run(memory));
            for (const key of KEYS) expect(await r.get(key, now)).toStrictEqual(await memory.get(key, now));
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('keeps the record as a hash under prefix:idem:key with the receipt as JSON text and a Redis expiry past expiresAt', async () => {
    const p = prefix('layout');
    const store = new RedisIdempotencyStore({ redis: a, prefix: p, ttlMs: 5000 });
    await store.begin('k', 'w1', 100_000, 0);
    expect(await a.pttl(`${p}:idem:k`)).toBeGreaterThan(100_000 + EXPIRY_MARGIN_MS - 5000);
    expect(await a.pttl(`${p}:idem:k`)).toBeLessThanOrEqual(100_000 + EXPIRY_MARGIN_MS);
    await store.succeed('k', 'w1', { id: 'm-1', n: [1, 2] }, 10);
    expect(await a.hgetall(`${p}:idem:k`)).toStrictEqual({
      key: 'k',
      status: 'succeeded',
      owner: 'w1',
      attempts: '1',
      createdAt: '0',
      updatedAt: '10',
      leaseUntil: '0',
      expiresAt: '5010',
      receipt: '{"id":"m-1","n":[1,2]}',
    });
    const ttl = await a.pttl(`${p}:idem:k`);
    expect(ttl).toBeGreaterThan(5000 + EXPIRY_MARGIN_MS - 5000);
    expect(ttl).toBeLessThanOrEqual(5000 + EXPIRY_MARGIN_MS);
  });

  it('keeps a record with an endless ttl for good', async () => {
    const p = prefix('forever');
    const store = new RedisIdempotencyStore({ redis: a, prefix: p, ttlMs: Infinity });
    const begun = await store.begin('k', 'w1', 100, 0);
    expect(begun.record.expiresAt).toBe(Infinity);
    expect(await a.pttl(`${p}:idem:k`)).toBe(-1);
    expect((await store.get('k', 1e300))?.status).toBe('in_progress');
  });

  it('treats an expired record as absent while Redis still holds it, and starts afresh over it', async () => {
    const p = prefix('stale');
    const store = new RedisIdempotencyStore({ redis: a, prefix: p, ttlMs: 10 });
    await store.begin('k', 'w1', 5, 0);
    await store.fail('k', 'w1', { error: 'boom', retryable: false }, 1);
    expect(await store.get('k', 11)).toBeUndefined();
    expect(await a.exists(`${p}:idem:k`)).toBe(1);
    const anew = await store.begin('k', 'w2', 5, 11);
    expect(anew).toStrictEqual({
      outcome: 'acquired',
      record: {
        key: 'k',
        status: 'in_progress',
        owner: 'w2',
        attempts: 1,
        createdAt: 11,
        updatedAt: 11,
        leaseUntil: 16,
        expiresAt: 21,
      },
    });
    expect(await a.hexists(`${p}:idem:k`, 'error')).toBe(0);
  });

  it('is one store for two processes on the same prefix, and none across prefixes', async () => {
    const p = prefix('shared');
    const one = new RedisIdempotencyStore({ redis: a, prefix: p });
    const two = new RedisIdempotencyStore({ redis: b, prefix: p });
    const elsewhere = new RedisIdempotencyStore({ redis: b, prefix: prefix('elsewhere') });
    await one.begin('k', 'w1', 1000, 0);
    expect(await two.begin('k', 'w2', 1000, 10)).toMatchObject({
      outcome: 'in_progress',
      record: { owner: 'w1', leaseUntil: 1000 },
    });
    expect((await elsewhere.begin('k', 'w3', 1000, 10)).outcome).toBe('acquired');
    expect(await two.succeed('k', 'w2', 'not mine', 20)).toBe(false);
    expect(await one.succeed('k', 'w1', { id: 7 }, 20)).toBe(true);
    expect(await two.begin('k', 'w2', 1000, 30)).toMatchObject({
      outcome: 'succeeded',
      record: { owner: 'w1', receipt: { id: 7 } },
    });
  });

  it('lets exactly one of 20 concurrent begins from two processes acquire a key', async () => {
    const p = prefix('race');
    const stores = [
      new RedisIdempotencyStore({ redis: a, prefix: p }),
      new RedisIdempotencyStore({ redis: b, prefix: p }),
    ];
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => stores[i % 2].begin('k', `w${i}`, 1000, 0)));
    const acquired = results.filter((r) => r.outcome === 'acquired');
    expect(acquired).toHaveLength(1);
    expect(results.filter((r) => r.outcome === 'in_progress')).toHaveLength(19);
    for (const r of results) expect(r.record).toMatchObject({ owner: acquired[0].record.owner, attempts: 1 });
  });

  it('runs withIdempotency end to end: a duplicate in another process gets the receipt, not a second side effect', async () => {
    const p = prefix('with');
    const clock = new ManualClock(1_764_540_000_000);
    const one = new RedisIdempotencyStore({ redis: a, prefix: p });
    const two = new RedisIdempotencyStore({ redis: b, prefix: p });
    let sent = 0;
    const send = async () => ({ messageId: `m-${++sent}`, at: new Date(0) });
    const first = await withIdempotency({ store: one, key: 't:u:send:r:1', clock, random: new SeededRandom(1) }, send);
    expect(first).toStrictEqual({ status: 'executed', value: { messageId: 'm-1', at: new Date(0) } });
    clock.advance(5000);
    const dup = await withIdempotency({ store: two, key: 't:u:send:r:1', clock, random: new SeededRandom(2) }, send);
    expect(dup).toStrictEqual({ status: 'replayed', value: { messageId: 'm-1', at: '1970-01-01T00:00:00.000Z' } });
    expect(sent).toBe(1);
  });

  it('refuses a concurrent duplicate from another process while the first one runs', async () => {
    const p = prefix('with-busy');
    const clock = new ManualClock(0);
    const one = new RedisIdempotencyStore({ redis: a, prefix: p });
    const two = new RedisIdempotencyStore({ redis: b, prefix: p });
    let release!: (v: string) => void;
    const gate = new Promise<string>((resolve) => (release = resolve));
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const first = withIdempotency(
      { store: one, key: 'k', clock, random: new SeededRandom(1), leaseMs: 30_000, renewEveryMs: 0 },
      () => {
        started();
        return gate;
      },
    );
    await running;
    clock.advance(1000);
    const err = await withIdempotency(
      { store: two, key: 'k', clock, random: new SeededRandom(2) },
      async () => 'dup',
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IdempotencyInProgressError);
    expect(err).toMatchObject({ retryAfterMs: 29_000 });
    release('sent');
    expect(await first).toStrictEqual({ status: 'executed', value: 'sent' });
  });

  it('validates its client and prefix', () => {
    expect(() => new RedisIdempotencyStore({ redis: undefined as never })).toThrow(
      'idempotencyStore.redis must be an ioredis client',
    );
    expect(() => new RedisIdempotencyStore({ redis: a, prefix: '' })).toThrow(OptionError);
    expect(() => new RedisIdempotencyStore({ redis: a, prefix: '' })).toThrow(
      'idempotencyStore.prefix must be a non-empty string, got ""',
    );
    expect(new RedisIdempotencyStore({ redis: a })).toMatchObject({ prefix: 'stormlab', ttlMs: 86_400_000 });
  });
});

describe('RedisIdempotencyStore without Redis', () => {
  let dead: Redis;
  let port: number;

  beforeAll(async () => {
    // A port that was just listening and is now closed: nothing answers there.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
    await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    dead = new Redis({
      host: '127.0.0.1',
      port,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      lazyConnect: true,
      retryStrategy: () => null,
    });
    dead.on('error', () => {});
  });

  afterAll(() => {
    dead.disconnect();
  });

  it('fails closed: every method rejects with StoreUnavailableError naming the store and the cause', async () => {
    const store = new RedisIdempotencyStore({ redis: dead, prefix: 'down' });
    const calls: Array<[string, () => Promise<unknown>]> = [
      ['begin key "k"', () => store.begin('k', 'w', 100, 0)],
      ['record success for key "k"', () => store.succeed('k', 'w', 'r', 0)],
      ['record failure for key "k"', () => store.fail('k', 'w', { error: 'x', retryable: true }, 0)],
      ['renew key "k"', () => store.renew('k', 'w', 100, 0)],
      ['read key "k"', () => store.get('k', 0)],
    ];
    for (const [operation, call] of calls) {
      const err = await call().then(
        (value) => ({ resolved: value }),
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(StoreUnavailableError);
      expect(err).toBeInstanceOf(StormlabError);
      expect(err).toMatchObject({
        code: 'ERR_STORMLAB_STORE_UNAVAILABLE',
        store: 'RedisIdempotencyStore (prefix "down")',
      });
      const { message, cause } = err as Error;
      expect(message).toMatch(new RegExp(`^RedisIdempotencyStore \\(prefix "down"\\) could not ${operation}: .+`));
      expect(cause).toBeInstanceOf(Error);
      expect(message).toContain((cause as Error).message);
    }
  });

  it('still reports bad arguments as OptionError, before reaching for Redis', async () => {
    const store = new RedisIdempotencyStore({ redis: dead, prefix: 'down' });
    await expect(store.begin('k', 'w', 0, 0)).rejects.toThrow('idempotencyStore.leaseMs must be a number > 0, got 0');
    await expect(store.succeed('', 'w', 1, 0)).rejects.toThrow(OptionError);
  });

  it('makes withIdempotency fail without running the side effect', async () => {
    const store = new RedisIdempotencyStore({ redis: dead, prefix: 'down' });
    let calls = 0;
    const run = withIdempotency(
      { store, key: 'k', clock: new ManualClock(0), random: new SeededRandom(1) },
      async () => ++calls,
    );
    await expect(run).rejects.toThrow(StoreUnavailableError);
    expect(calls).toBe(0);
  });
});
