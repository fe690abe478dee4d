import { expect, it } from 'vitest';
import fc from 'fast-check';
import type { IdempotencyRecord, IdempotencyStore } from '../../../src/engine/idempotency-store.js';
import { OptionError } from '../../../src/engine/errors.js';

export interface IdempotencyStoreContractOptions {
  /** A fresh, empty store each call (a Redis factory hands out a new prefix). */
  make: (options?: { ttlMs?: number }) => IdempotencyStore;
  /** Runs of the model property (each makes a store). @default 500 */
  modelRuns?: number;
}

/**
 * What every `IdempotencyStore` must do, written once and run against each store (call it
 * inside the store's `describe`): the memory store is the reference, and a shared store that
 * passes these behaves the same behind `withIdempotency`.
 */
export function idempotencyStoreContract({ make, modelRuns = 500 }: IdempotencyStoreContractOptions): void {
  const K = 't1:u9:send_email:thread123:v3';

  it('goes in_progress → succeeded and then hands out the receipt', async () => {
    const store = make();
    const begun = await store.begin(K, 'w1', 1000, 10);
    expect(begun).toStrictEqual({
      outcome: 'acquired',
      record: {
        key: K,
        status: 'in_progress',
        owner: 'w1',
        attempts: 1,
        createdAt: 10,
        updatedAt: 10,
        leaseUntil: 1010,
        expiresAt: 86_400_010,
      },
    });
    expect(await store.succeed(K, 'w1', { messageId: 'm-1' }, 50)).toBe(true);
    const again = await store.begin(K, 'w2', 1000, 60);
    expect(again.outcome).toBe('succeeded');
    expect(again.record).toMatchObject({
      status: 'succeeded',
      owner: 'w1',
      attempts: 1,
      createdAt: 10,
      updatedAt: 50,
      leaseUntil: 0,
      receipt: { messageId: 'm-1' },
    });
  });

  it('refuses a second owner while the lease is live, and lets it retake the key once the lease runs out', async () => {
    const store = make();
    await store.begin(K, 'w1', 1000, 0);
    expect((await store.begin(K, 'w2', 1000, 999)).outcome).toBe('in_progress');
    expect((await store.begin(K, 'w1', 1000, 999)).outcome).toBe('in_progress');
    const retaken = await store.begin(K, 'w2', 500, 1000);
    expect(retaken.outcome).toBe('acquired');
    expect(retaken.record).toMatchObject({ owner: 'w2', attempts: 2, createdAt: 0, updatedAt: 1000, leaseUntil: 1500 });
  });

  it('lets a stale owner change nothing once its key was retaken', async () => {
    const store = make();
    await store.begin(K, 'w1', 100, 0);
    await store.begin(K, 'w2', 100, 200);
    const before = await store.get(K, 250);
    expect(await store.succeed(K, 'w1', 'late', 250)).toBe(false);
    expect(await store.fail(K, 'w1', { error: 'late', retryable: false }, 250)).toBe(false);
    expect(await store.renew(K, 'w1', 100, 250)).toBe(false);
    expect(await store.get(K, 250)).toStrictEqual(before);
    expect(await store.succeed(K, 'w2', 'ok', 260)).toBe(true);
    expect(await store.succeed(K, 'w2', 'twice', 270)).toBe(false);
    expect((await store.get(K, 280))?.receipt).toBe('ok');
  });

  it('still records an owner whose lease ran out if nobody retook the key', async () => {
    const store = make();
    await store.begin(K, 'w1', 100, 0);
    expect(await store.succeed(K, 'w1', 'done', 500)).toBe(true);
    expect((await store.begin(K, 'w2', 100, 600)).outcome).toBe('succeeded');
  });

  it('renews the lease for its owner only', async () => {
    const store = make();
    await store.begin(K, 'w1', 100, 0);
    expect(await store.renew(K, 'w2', 100, 50)).toBe(false);
    expect(await store.renew(K, 'w1', 100, 90)).toBe(true);
    expect((await store.get(K, 90))?.leaseUntil).toBe(190);
    expect((await store.begin(K, 'w2', 100, 150)).outcome).toBe('in_progress');
    expect((await store.begin(K, 'w2', 100, 190)).outcome).toBe('acquired');
    await store.succeed(K, 'w2', null, 200);
    expect(await store.renew(K, 'w2', 100, 210)).toBe(false);
  });

  it('never shortens a lease on renewal', async () => {
    const store = make();
    await store.begin(K, 'w1', 1000, 0);
    expect(await store.renew(K, 'w1', 10, 100)).toBe(true);
    expect(await store.get(K, 100)).toMatchObject({ leaseUntil: 1000, updatedAt: 100 });
  });

  it('lets a retryable failure be retaken and keeps a non-retryable one final', async () => {
    const store = make();
    await store.begin(K, 'w1', 100, 0);
    expect(await store.fail(K, 'w1', { error: '503 from upstream', retryable: true }, 10)).toBe(true);
    expect(await store.get(K, 10)).toMatchObject({
      status: 'failed',
      error: '503 from upstream',
      retryable: true,
      leaseUntil: 0,
    });
    const retry = await store.begin(K, 'w2', 100, 20);
    expect(retry.outcome).toBe('acquired');
    expect(retry.record).toMatchObject({ owner: 'w2', attempts: 2, status: 'in_progress' });
    expect(retry.record.error).toBeUndefined();
    expect('retryable' in retry.record).toBe(false);
    await store.fail(K, 'w2', { error: '400 bad request', retryable: false }, 30);
    const final = await store.begin(K, 'w3', 100, 1_000_000);
    expect(final.outcome).toBe('failed');
    expect(final.record).toMatchObject({ owner: 'w2', attempts: 2, error: '400 bad request', retryable: false });
  });

  it('forgets records after ttlMs from their last write', async () => {
    const store = make({ ttlMs: 1000 });
    await store.begin(K, 'w1', 100, 0);
    await store.succeed(K, 'w1', 'r', 50);
    expect((await store.get(K, 1049))?.status).toBe('succeeded');
    expect(await store.get(K, 1050)).toBeUndefined();
    expect(await store.succeed(K, 'w1', 'again', 1050)).toBe(false);
    const anew = await store.begin(K, 'w2', 100, 1050);
    expect(anew.outcome).toBe('acquired');
    expect(anew.record).toStrictEqual({
      key: K,
      status: 'in_progress',
      owner: 'w2',
      attempts: 1,
      createdAt: 1050,
      updatedAt: 1050,
      leaseUntil: 1150,
      expiresAt: 2050,
    });
  });

  it('never forgets a record while its lease is live, even with a short ttl', async () => {
    const store = make({ ttlMs: 10 });
    const begun = await store.begin(K, 'w1', 1000, 0);
    expect(begun.record.expiresAt).toBe(1000);
    expect((await store.begin(K, 'w2', 1000, 500)).outcome).toBe('in_progress');
  });

  it('keeps fractional timestamps exactly', async () => {
    const store = make({ ttlMs: 0.7 });
    const now = 1_764_540_000_000.123;
    const begun = await store.begin(K, 'w1', 0.1, now);
    expect(begun.record).toMatchObject({ createdAt: now, leaseUntil: now + 0.1, expiresAt: now + 0.7 });
    expect(await store.renew(K, 'w1', 0.3, now + 0.2)).toBe(true);
    expect((await store.get(K, now + 0.2))?.leaseUntil).toBe(now + 0.2 + 0.3);
    expect(await store.get(K, now + 0.2 + 0.7)).toBeUndefined();
  });

  it('hands out copies that cannot change the store', async () => {
    const store = make();
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
    const store = make();
    await store.begin(K, 'w1', 100, 0);
    await store.succeed(K, 'w1', { at: new Date(0), skip: undefined }, 1);
    expect((await store.get(K, 2))?.receipt).toStrictEqual({ at: '1970-01-01T00:00:00.000Z' });
    await store.begin('other', 'w1', 100, 0);
    await expect(store.succeed('other', 'w1', { n: 1n }, 1)).rejects.toThrow(
      /receipt for idempotency key "other" must be JSON-serialisable/,
    );
    await expect(store.succeed('other', 'w1', { n: 1n }, 1)).rejects.toThrow(OptionError);
    expect((await store.get('other', 2))?.status).toBe('in_progress');
    expect(await store.succeed('other', 'w2', { n: 1n }, 1)).toBe(false);
  });

  it('keeps a receipt that JSON cannot hold (undefined) as no receipt, and null as null', async () => {
    const store = make();
    await store.begin('a', 'w1', 100, 0);
    expect(await store.succeed('a', 'w1', undefined, 1)).toBe(true);
    expect('receipt' in (await store.get('a', 2))!).toBe(false);
    await store.begin('b', 'w1', 100, 0);
    await store.succeed('b', 'w1', null, 1);
    expect((await store.get('b', 2))!.receipt).toBeNull();
  });

  it('validates its options and arguments', async () => {
    expect(() => make({ ttlMs: 0 })).toThrow(OptionError);
    expect(() => make({ ttlMs: -5 })).toThrow('idempotencyStore.ttlMs must be a number > 0, got -5');
    const store = make();
    await expect(store.begin(K, 'w', 0, 0)).rejects.toThrow('idempotencyStore.leaseMs must be a number > 0, got 0');
    await expect(store.begin('', 'w', 10, 0)).rejects.toThrow('idempotency key must be a non-empty string, got ""');
    await expect(store.begin(K, '', 10, 0)).rejects.toThrow('idempotency owner must be a non-empty string, got ""');
    await expect(store.renew(K, 'w', Number.NaN, 0)).rejects.toThrow(OptionError);
    await expect(store.succeed('', 'w', 1, 0)).rejects.toThrow(OptionError);
    await expect(store.fail(K, '', { error: 'x', retryable: true }, 0)).rejects.toThrow(OptionError);
    expect(await store.get(K, 0)).toBeUndefined();
  });

  it('never lets two owners hold a live lease on one key, and a success stays final until the ttl forgets it (model)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 60 }), fc.integer({ min: 1, max: 200 }), async (ops, ttlMs) => {
        const store = make({ ttlMs });
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
            if (!ok) expect(await store.get(k, now)).toStrictEqual(before);
            if (ok && o.t === 'renew') belief.set(who, Math.max(belief.get(who)!, now + o.lease));
            else belief.delete(who);
            if (ok && o.t === 'succeed') doneUntil[o.k] = now + ttlMs;
          }
          for (let i = 0; i < KEYS.length; i++) {
            const live = [...beliefs[i]].filter(([, until]) => until > now);
            expect(live.length).toBeLessThanOrEqual(1);
            if (live.length === 1) {
              expect(await store.get(KEYS[i], now)).toMatchObject({
                status: 'in_progress',
                owner: live[0][0],
                leaseUntil: live[0][1],
              });
            }
          }
        }
      }),
      { numRuns: modelRuns },
    );
  });
}

export type Op =
  | { t: 'begin'; k: number; o: number; lease: number }
  | { t: 'succeed'; k: number; o: number }
  | { t: 'fail'; k: number; o: number; retryable: boolean }
  | { t: 'renew'; k: number; o: number; lease: number }
  | { t: 'advance'; ms: number };

export const KEYS = ['k0', 'k1'];
export const OWNERS = ['a', 'b', 'c'];
const key = fc.integer({ min: 0, max: KEYS.length - 1 });
const owner = fc.integer({ min: 0, max: OWNERS.length - 1 });
const lease = fc.integer({ min: 1, max: 50 });
/** One step on two keys and three owners: random enough to hit every transition, small enough to collide. */
export const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ t: fc.constant('begin' as const), k: key, o: owner, lease }),
  fc.record({ t: fc.constant('succeed' as const), k: key, o: owner }),
  fc.record({ t: fc.constant('fail' as const), k: key, o: owner, retryable: fc.boolean() }),
  fc.record({ t: fc.constant('renew' as const), k: key, o: owner, lease }),
  fc.record({ t: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 60 }) }),
);
