import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { idempotencyKey, parseIdempotencyKey, type IdempotencyKeyParts } from '../../src/engine/idempotency-key.js';
import { MemoryIdempotencyStore, type IdempotencyRecord } from '../../src/engine/idempotency-store.js';
import { IdempotencyFailedError, IdempotencyInProgressError, withIdempotency } from '../../src/engine/with-idempotency.js';
import { ManualClock } from '../../src/engine/manual-clock.js';
import { SeededRandom } from '../../src/engine/random.js';
import { OptionError } from '../../src/engine/errors.js';

const PARTS: IdempotencyKeyParts = { tenant: 't1', user: 'u9', action: 'send_email', resource: 'thread123', version: 'v3' };

describe('idempotencyKey', () => {
  it('is tenant:user:action:resource:version', () => {
    expect(idempotencyKey(PARTS)).toBe('t1:u9:send_email:thread123:v3');
  });

  it('treats a numeric version like its string form (same intent, same key)', () => {
    expect(idempotencyKey({ ...PARTS, version: 3 })).toBe('t1:u9:send_email:thread123:3');
    expect(idempotencyKey({ ...PARTS, version: 3 })).toBe(idempotencyKey({ ...PARTS, version: '3' }));
  });

  it('percent-encodes % and : inside parts', () => {
    expect(idempotencyKey({ ...PARTS, resource: 'a:b', version: '100%' })).toBe('t1:u9:send_email:a%3Ab:100%25');
    expect(idempotencyKey({ ...PARTS, resource: '%3A' })).toBe('t1:u9:send_email:%253A:v3');
    expect(idempotencyKey({ ...PARTS, user: 'u:send_email', action: 'x' })).not.toBe(idempotencyKey({ ...PARTS, user: 'u', action: 'send_email:x' }));
  });

  const part = fc.string({ minLength: 1, maxLength: 6, unit: fc.constantFrom('a', 'b', ':', '%', '3', 'A', '2', '5') });
  const tuple = fc.record({ tenant: part, user: part, action: part, resource: part, version: part });

  it('never maps distinct part tuples to one key (property)', () => {
    fc.assert(
      fc.property(tuple, tuple, (a, b) => {
        const same = JSON.stringify(a) === JSON.stringify(b);
        expect(idempotencyKey(a) === idempotencyKey(b)).toBe(same);
      }),
      { numRuns: 2000 }
    );
  });

  it('differs for two ways of cutting the same text into parts (property)', () => {
    // The collisions a naive join allows: the same characters, split at different places.
    const cuts = fc.uniqueArray(fc.integer({ min: 1, max: 11 }), { minLength: 4, maxLength: 4 }).map((c) => c.sort((x, y) => x - y));
    fc.assert(
      fc.property(fc.string({ minLength: 12, maxLength: 12, unit: fc.constantFrom('a', ':', '%') }), cuts, cuts, (text, c1, c2) => {
        const split = (c: number[]) => {
          const [tenant, user, action, resource, version] = [0, ...c].map((start, i) => text.slice(start, [...c, text.length][i]));
          return { tenant, user, action, resource, version };
        };
        expect(idempotencyKey(split(c1)) === idempotencyKey(split(c2))).toBe(c1.join() === c2.join());
      })
    );
  });

  it('parses back to the parts it was made from (property)', () => {
    fc.assert(
      fc.property(tuple, (parts) => {
        expect(parseIdempotencyKey(idempotencyKey(parts))).toEqual(parts);
      })
    );
    expect(() => parseIdempotencyKey('a:b:c')).toThrow('idempotency key must have 5 non-empty parts separated by ":", got "a:b:c"');
  });

  it('names the empty or invalid part', () => {
    for (const name of ['tenant', 'user', 'action', 'resource', 'version'] as const) {
      expect(() => idempotencyKey({ ...PARTS, [name]: '' })).toThrow(OptionError);
      expect(() => idempotencyKey({ ...PARTS, [name]: '' })).toThrow(`idempotencyKey.${name} must be a non-empty string, got ""`);
    }
    expect(() => idempotencyKey({ ...PARTS, resource: undefined as never })).toThrow('idempotencyKey.resource must be a non-empty string, got undefined');
    expect(() => idempotencyKey({ ...PARTS, version: Number.NaN })).toThrow('idempotencyKey.version must be a non-empty string or a finite number, got NaN');
  });
});

describe('MemoryIdempotencyStore', () => {
  const K = 't1:u9:send_email:thread123:v3';

  it('goes in_progress → succeeded and then hands out the receipt', async () => {
    const store = new MemoryIdempotencyStore();
    const begun = await store.begin(K, 'w1', 1000, 10);
    expect(begun).toEqual({
      outcome: 'acquired',
      record: { key: K, status: 'in_progress', owner: 'w1', attempts: 1, createdAt: 10, updatedAt: 10, leaseUntil: 1010, expiresAt: 86_400_010 },
    });
    expect(await store.succeed(K, 'w1', { messageId: 'm-1' }, 50)).toBe(true);
    const again = await store.begin(K, 'w2', 1000, 60);
    expect(again.outcome).toBe('succeeded');
    expect(again.record).toMatchObject({ status: 'succeeded', owner: 'w1', attempts: 1, createdAt: 10, updatedAt: 50, leaseUntil: 0, receipt: { messageId: 'm-1' } });
  });

  it('refuses a second owner while the lease is live, and lets it retake the key once the lease runs out', async () => {
    const store = new MemoryIdempotencyStore();
    await store.begin(K, 'w1', 1000, 0);
    expect((await store.begin(K, 'w2', 1000, 999)).outcome).toBe('in_progress');
    expect((await store.begin(K, 'w1', 1000, 999)).outcome).toBe('in_progress');
    const retaken = await store.begin(K, 'w2', 500, 1000);
    expect(retaken.outcome).toBe('acquired');
    expect(retaken.record).toMatchObject({ owner: 'w2', attempts: 2, createdAt: 0, updatedAt: 1000, leaseUntil: 1500 });
  });

  it('lets a stale owner change nothing once its key was retaken', async () => {
    const store = new MemoryIdempotencyStore();
    await store.begin(K, 'w1', 100, 0);
    await store.begin(K, 'w2', 100, 200);
    const before = await store.get(K, 250);
    expect(await store.succeed(K, 'w1', 'late', 250)).toBe(false);
    expect(await store.fail(K, 'w1', { error: 'late', retryable: false }, 250)).toBe(false);
    expect(await store.renew(K, 'w1', 100, 250)).toBe(false);
    expect(await store.get(K, 250)).toEqual(before);
    expect(await store.succeed(K, 'w2', 'ok', 260)).toBe(true);
    expect(await store.succeed(K, 'w2', 'twice', 270)).toBe(false);
    expect((await store.get(K, 280))?.receipt).toBe('ok');
  });

  it('still records an owner whose lease ran out if nobody retook the key', async () => {
    const store = new MemoryIdempotencyStore();
    await store.begin(K, 'w1', 100, 0);
    expect(await store.succeed(K, 'w1', 'done', 500)).toBe(true);
    expect((await store.begin(K, 'w2', 100, 600)).outcome).toBe('succeeded');
  });

  it('renews the lease for its owner only', async () => {
    const store = new MemoryIdempotencyStore();
    await store.begin(K, 'w1', 100, 0);
    expect(await store.renew(K, 'w2', 100, 50)).toBe(false);
    expect(await store.renew(K, 'w1', 100, 90)).toBe(true);
    expect((await store.get(K, 90))?.leaseUntil).toBe(190);
    expect((await store.begin(K, 'w2', 100, 150)).outcome).toBe('in_progress');
    expect((await store.begin(K, 'w2', 100, 190)).outcome).toBe('acquired');
    await store.succeed(K, 'w2', null, 200);
    expect(await store.renew(K, 'w2', 100, 210)).toBe(false);
  });

  it('lets a retryable failure be retaken and keeps a non-retryable one final', async () => {
    const store = new MemoryIdempotencyStore();
    await store.begin(K, 'w1', 100, 0);
    expect(await store.fail(K, 'w1', { error: '503 from upstream', retryable: true }, 10)).toBe(true);
    expect(await store.get(K, 10)).toMatchObject({ status: 'failed', error: '503 from upstream', retryable: true, leaseUntil: 0 });
    const retry = await store.begin(K, 'w2', 100, 20);
    expect(retry.outcome).toBe('acquired');
    expect(retry.record).toMatchObject({ owner: 'w2', attempts: 2, status: 'in_progress' });
    expect(retry.record.error).toBeUndefined();
    await store.fail(K, 'w2', { error: '400 bad request', retryable: false }, 30);
    const final = await store.begin(K, 'w3', 100, 1_000_000);
    expect(final.outcome).toBe('failed');
    expect(final.record).toMatchObject({ owner: 'w2', attempts: 2, error: '400 bad request', retryable: false });
  });

  it('forgets records after ttlMs from their last write', async () => {
    const store = new MemoryIdempotencyStore({ ttlMs: 1000 });
    await store.begin(K, 'w1', 100, 0);
    await store.succeed(K, 'w1', 'r', 50);
    expect((await store.get(K, 1049))?.status).toBe('succeeded');
    expect(await store.get(K, 1050)).toBeUndefined();
    const anew = await store.begin(K, 'w2', 100, 1050);
    expect(anew.outcome).toBe('acquired');
    expect(anew.record).toMatchObject({ attempts: 1, createdAt: 1050 });
  });

  it('never forgets a record while its lease is live, even with a short ttl', async () => {
    const store = new MemoryIdempotencyStore({ ttlMs: 10 });
    const begun = await store.begin(K, 'w1', 1000, 0);
    expect(begun.record.expiresAt).toBe(1000);
    expect((await store.begin(K, 'w2', 1000, 500)).outcome).toBe('in_progress');
  });

  it('keeps memory flat by sweeping expired records as it writes', async () => {
    const store = new MemoryIdempotencyStore({ ttlMs: 100 });
    for (let i = 0; i < 1000; i++) {
      const now = i * 10;
      await store.begin(`k${i}`, 'w', 5, now);
      await store.succeed(`k${i}`, 'w', i, now);
    }
    expect(store.size).toBeLessThanOrEqual(11);
  });

  it('hands out copies that cannot change the store', async () => {
    const store = new MemoryIdempotencyStore();
    const begun = await store.begin(K, 'w1', 100, 0);
    begun.record.status = 'succeeded';
    begun.record.owner = 'thief';
    const receipt = { ids: [1, 2] };
    await store.succeed(K, 'w1', receipt, 10);
    receipt.ids.push(3);
    const read = (await store.get(K, 20)) as IdempotencyRecord;
    (read.receipt as { ids: number[] }).ids.push(4);
    read.status = 'in_progress';
    expect(await store.get(K, 30)).toMatchObject({ status: 'succeeded', owner: 'w1', receipt: { ids: [1, 2] } });
  });

  it('stores receipts as JSON, as a shared store would', async () => {
    const store = new MemoryIdempotencyStore();
    await store.begin(K, 'w1', 100, 0);
    await store.succeed(K, 'w1', { at: new Date(0), skip: undefined }, 1);
    expect((await store.get(K, 2))?.receipt).toEqual({ at: '1970-01-01T00:00:00.000Z' });
    await store.begin('other', 'w1', 100, 0);
    await expect(store.succeed('other', 'w1', { n: 1n }, 1)).rejects.toThrow(/receipt for idempotency key "other" must be JSON-serialisable/);
    expect((await store.get('other', 2))?.status).toBe('in_progress');
  });

  it('validates its options and arguments', async () => {
    expect(() => new MemoryIdempotencyStore({ ttlMs: 0 })).toThrow(OptionError);
    expect(() => new MemoryIdempotencyStore({ ttlMs: -5 })).toThrow('idempotencyStore.ttlMs must be a number > 0, got -5');
    const store = new MemoryIdempotencyStore();
    await expect(store.begin(K, 'w', 0, 0)).rejects.toThrow('idempotencyStore.leaseMs must be a number > 0, got 0');
    await expect(store.begin('', 'w', 10, 0)).rejects.toThrow('idempotency key must be a non-empty string, got ""');
    await expect(store.begin(K, '', 10, 0)).rejects.toThrow('idempotency owner must be a non-empty string, got ""');
    await expect(store.renew(K, 'w', Number.NaN, 0)).rejects.toThrow(OptionError);
  });
});

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('withIdempotency', () => {
  const K = idempotencyKey(PARTS);
  const setup = () => ({ store: new MemoryIdempotencyStore(), clock: new ManualClock(1000), random: new SeededRandom(7) });

  it('writes in_progress before the side effect runs, then stores the receipt', async () => {
    const { store, clock, random } = setup();
    let seen: IdempotencyRecord | undefined;
    const result = await withIdempotency({ store, key: K, clock, random }, async () => {
      seen = await store.get(K, clock.now());
      clock.advance(5);
      return { messageId: 'm-1' };
    });
    expect(seen).toMatchObject({ status: 'in_progress', attempts: 1, leaseUntil: 61_000 });
    expect(seen!.owner).toMatch(/^[0-9a-z]{12}$/);
    expect(result).toEqual({ status: 'executed', value: { messageId: 'm-1' } });
    expect(await store.get(K, clock.now())).toMatchObject({ status: 'succeeded', updatedAt: 1005, receipt: { messageId: 'm-1' } });
  });

  it('draws the owner id from the random stream (same seed, same owner)', async () => {
    const owners: string[] = [];
    for (let i = 0; i < 2; i++) {
      const { store, clock } = setup();
      await withIdempotency({ store, key: K, clock, random: new SeededRandom('same') }, async () => owners.push((await store.get(K, 0))!.owner));
    }
    expect(owners[0]).toBe(owners[1]);
  });

  it('replays the receipt for a duplicate without calling fn again', async () => {
    const { store, clock, random } = setup();
    let calls = 0;
    const send = async () => ({ messageId: `m-${++calls}` });
    await withIdempotency({ store, key: K, clock, random }, send);
    clock.advance(10_000);
    const dup = await withIdempotency({ store, key: K, clock, random }, send);
    expect(dup).toEqual({ status: 'replayed', value: { messageId: 'm-1' } });
    expect(calls).toBe(1);
  });

  it('refuses a concurrent duplicate with IdempotencyInProgressError', async () => {
    const { store, clock, random } = setup();
    const gate = deferred<string>();
    const first = withIdempotency({ store, key: K, clock, random, leaseMs: 30_000 }, () => gate.promise);
    clock.advance(1000);
    let calls = 0;
    const second = withIdempotency({ store, key: K, clock, random }, async () => `dup-${++calls}`);
    const err = await second.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IdempotencyInProgressError);
    expect(err).toMatchObject({ code: 'ERR_IDEMPOTENCY_IN_PROGRESS', retryAfterMs: 29_000, record: { key: K, status: 'in_progress' } });
    expect(calls).toBe(0);
    gate.resolve('sent');
    expect(await first).toEqual({ status: 'executed', value: 'sent' });
  });

  it('records a retryable failure, rethrows it, and lets the next call retake the key', async () => {
    const { store, clock, random } = setup();
    const boom = new Error('503 upstream');
    await expect(withIdempotency({ store, key: K, clock, random }, async () => Promise.reject(boom))).rejects.toBe(boom);
    expect(await store.get(K, clock.now())).toMatchObject({ status: 'failed', error: '503 upstream', retryable: true });
    const retry = await withIdempotency({ store, key: K, clock, random }, async () => 'ok');
    expect(retry).toEqual({ status: 'executed', value: 'ok' });
    expect((await store.get(K, clock.now()))?.attempts).toBe(2);
  });

  it('makes a non-retryable failure final', async () => {
    const { store, clock, random } = setup();
    const isRetryable = (err: unknown) => !(err instanceof Error && err.message.startsWith('400'));
    await expect(withIdempotency({ store, key: K, clock, random, isRetryable }, async () => Promise.reject(new Error('400 bad request')))).rejects.toThrow('400 bad request');
    let calls = 0;
    const err = await withIdempotency({ store, key: K, clock, random }, async () => ++calls).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IdempotencyFailedError);
    expect(err).toMatchObject({ code: 'ERR_IDEMPOTENCY_FAILED', record: { error: '400 bad request', retryable: false, attempts: 1 } });
    expect((err as Error).message).toContain('400 bad request');
    expect(calls).toBe(0);
  });

  it('stores a non-Error rejection as text', async () => {
    const { store, clock, random } = setup();
    await expect(withIdempotency({ store, key: K, clock, random }, async () => Promise.reject('nope'))).rejects.toBe('nope');
    expect((await store.get(K, clock.now()))?.error).toBe('nope');
  });

  it('says leaseLost when another owner retook the key while fn ran', async () => {
    const { store, clock, random } = setup();
    const result = await withIdempotency({ store, key: K, clock, random, leaseMs: 100, renewEveryMs: 0 }, async () => {
      clock.advance(150);
      expect((await store.begin(K, 'other', 100, clock.now())).outcome).toBe('acquired');
      return 'sent';
    });
    expect(result).toEqual({ status: 'executed', value: 'sent', leaseLost: true });
    expect(await store.get(K, clock.now())).toMatchObject({ status: 'in_progress', owner: 'other' });
  });

  it('renews its lease on the clock while fn runs, and stops when fn ends', async () => {
    const { store, clock, random } = setup();
    const gate = deferred<string>();
    const run = withIdempotency({ store, key: K, clock, random, leaseMs: 300 }, () => gate.promise);
    await Promise.resolve();
    for (let i = 0; i < 10; i++) clock.advance(100);
    expect((await store.begin(K, 'other', 300, clock.now())).outcome).toBe('in_progress');
    expect((await store.get(K, clock.now()))!.leaseUntil).toBeGreaterThan(clock.now());
    gate.resolve('done');
    expect(await run).toEqual({ status: 'executed', value: 'done' });
    expect(clock.pending).toBe(0);
  });

  it('with renewal off, the lease runs out and a duplicate may take the key', async () => {
    const { store, clock, random } = setup();
    const gate = deferred<string>();
    const run = withIdempotency({ store, key: K, clock, random, leaseMs: 300, renewEveryMs: 0 }, () => gate.promise);
    await Promise.resolve();
    clock.advance(300);
    expect(clock.pending).toBe(0);
    expect((await store.begin(K, 'other', 300, clock.now())).outcome).toBe('acquired');
    gate.resolve('late');
    expect(await run).toMatchObject({ leaseLost: true });
  });

  it('validates its options', async () => {
    const { store, clock, random } = setup();
    const fn = async () => 1;
    await expect(withIdempotency({ store, key: K, clock, random, leaseMs: 0 }, fn)).rejects.toThrow('withIdempotency.leaseMs must be a number > 0, got 0');
    await expect(withIdempotency({ store, key: K, clock, random, renewEveryMs: -1 }, fn)).rejects.toThrow('withIdempotency.renewEveryMs must be a number >= 0, got -1');
    await expect(withIdempotency({ store, key: '', clock, random }, fn)).rejects.toThrow(OptionError);
    expect(await store.get(K, clock.now())).toBeUndefined();
  });
});

type Op =
  | { t: 'begin'; k: number; o: number; lease: number }
  | { t: 'succeed'; k: number; o: number }
  | { t: 'fail'; k: number; o: number; retryable: boolean }
  | { t: 'renew'; k: number; o: number; lease: number }
  | { t: 'advance'; ms: number };

const KEYS = ['k0', 'k1'];
const OWNERS = ['a', 'b', 'c'];
const key = fc.integer({ min: 0, max: KEYS.length - 1 });
const owner = fc.integer({ min: 0, max: OWNERS.length - 1 });
const lease = fc.integer({ min: 1, max: 50 });
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ t: fc.constant('begin' as const), k: key, o: owner, lease }),
  fc.record({ t: fc.constant('succeed' as const), k: key, o: owner }),
  fc.record({ t: fc.constant('fail' as const), k: key, o: owner, retryable: fc.boolean() }),
  fc.record({ t: fc.constant('renew' as const), k: key, o: owner, lease }),
  fc.record({ t: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 60 }) })
);

describe('MemoryIdempotencyStore model', () => {
  it('never lets two owners hold a live lease on one key, and a success stays final until the ttl forgets it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 60 }), fc.integer({ min: 1, max: 200 }), async (ops, ttlMs) => {
        const store = new MemoryIdempotencyStore({ ttlMs });
        let now = 0;
        // What each owner believes: the time its lease on a key runs out (absent: it holds nothing).
        const beliefs = KEYS.map(() => new Map<string, number>());
        const doneUntil = KEYS.map(() => -Infinity);
        for (const o of ops) {
          if (o.t === 'advance') {
            now += o.ms;
            continue;
          }
          const k = KEYS[o.k];
          const who = OWNERS[o.o];
          const belief = beliefs[o.k];
          const before = await store.get(k, now);
          if (o.t === 'begin') {
            const r = await store.begin(k, who, o.lease, now);
            if (r.outcome === 'acquired') {
              expect(now).toBeGreaterThanOrEqual(doneUntil[o.k]);
              expect(r.record).toMatchObject({ owner: who, status: 'in_progress', leaseUntil: now + o.lease });
              belief.set(who, r.record.leaseUntil);
            }
          } else {
            const ok =
              o.t === 'succeed'
                ? await store.succeed(k, who, `${who}@${now}`, now)
                : o.t === 'fail'
                  ? await store.fail(k, who, { error: 'x', retryable: o.retryable }, now)
                  : await store.renew(k, who, o.lease, now);
            if (!ok) expect(await store.get(k, now)).toEqual(before);
            if (ok && o.t === 'renew') belief.set(who, Math.max(belief.get(who)!, now + o.lease));
            else belief.delete(who);
            if (ok && o.t === 'succeed') doneUntil[o.k] = now + ttlMs;
          }
          for (let i = 0; i < KEYS.length; i++) {
            const live = [...beliefs[i]].filter(([, until]) => until > now);
            expect(live.length).toBeLessThanOrEqual(1);
            if (live.length === 1) {
              expect(await store.get(KEYS[i], now)).toMatchObject({ status: 'in_progress', owner: live[0][0], leaseUntil: live[0][1] });
            }
          }
        }
      }),
      { numRuns: 500 }
    );
  });
});
