import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { idempotencyKey, parseIdempotencyKey, type IdempotencyKeyParts } from '../../src/engine/idempotency-key.js';
import { MemoryIdempotencyStore, type IdempotencyRecord } from '../../src/engine/idempotency-store.js';
import { idempotencyStoreContract } from './stores/idempotency-store-contract.js';
import {
  IdempotencyFailedError,
  IdempotencyInProgressError,
  withIdempotency,
} from '../../src/engine/with-idempotency.js';
import { ManualClock } from '../../src/engine/manual-clock.js';
import { SeededRandom } from '../../src/engine/random.js';
import { OptionError } from '../../src/engine/errors.js';

const PARTS: IdempotencyKeyParts = {
  tenant: 't1',
  user: 'u9',
  action: 'send_email',
  resource: 'thread123',
  version: 'v3',
};

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
    expect(idempotencyKey({ ...PARTS, user: 'u:send_email', action: 'x' })).not.toBe(
      idempotencyKey({ ...PARTS, user: 'u', action: 'send_email:x' }),
    );
  });

  const part = fc.string({ minLength: 1, maxLength: 6, unit: fc.constantFrom('a', 'b', ':', '%', '3', 'A', '2', '5') });
  const tuple = fc.record({ tenant: part, user: part, action: part, resource: part, version: part });

  it('never maps distinct part tuples to one key (property)', () => {
    fc.assert(
      fc.property(tuple, tuple, (a, b) => {
        const same = JSON.stringify(a) === JSON.stringify(b);
        expect(idempotencyKey(a) === idempotencyKey(b)).toBe(same);
      }),
      { numRuns: 2000 },
    );
  });

  it('differs for two ways of cutting the same text into parts (property)', () => {
    // The collisions a naive join allows: the same characters, split at different places.
    const cuts = fc
      .uniqueArray(fc.integer({ min: 1, max: 11 }), { minLength: 4, maxLength: 4 })
      .map((c) => c.sort((x, y) => x - y));
    fc.assert(
      fc.property(
        fc.string({ minLength: 12, maxLength: 12, unit: fc.constantFrom('a', ':', '%') }),
        cuts,
        cuts,
        (text, c1, c2) => {
          const split = (c: number[]) => {
            const [tenant, user, action, resource, version] = [0, ...c].map((start, i) =>
              text.slice(start, [...c, text.length][i]),
            );
            return { tenant, user, action, resource, version };
          };
          expect(idempotencyKey(split(c1)) === idempotencyKey(split(c2))).toBe(c1.join() === c2.join());
        },
      ),
    );
  });

  it('parses back to the parts it was made from (property)', () => {
    fc.assert(
      fc.property(tuple, (parts) => {
        expect(parseIdempotencyKey(idempotencyKey(parts))).toEqual(parts);
      }),
    );
    expect(() => parseIdempotencyKey('a:b:c')).toThrow(
      'idempotency key must have 5 non-empty parts separated by ":", got "a:b:c"',
    );
  });

  it('names the empty or invalid part', () => {
    for (const name of ['tenant', 'user', 'action', 'resource', 'version'] as const) {
      expect(() => idempotencyKey({ ...PARTS, [name]: '' })).toThrow(OptionError);
      expect(() => idempotencyKey({ ...PARTS, [name]: '' })).toThrow(
        `idempotencyKey.${name} must be a non-empty string, got ""`,
      );
    }
    expect(() => idempotencyKey({ ...PARTS, resource: undefined as never })).toThrow(
      'idempotencyKey.resource must be a non-empty string, got undefined',
    );
    expect(() => idempotencyKey({ ...PARTS, version: Number.NaN })).toThrow(
      'idempotencyKey.version must be a non-empty string or a finite number, got NaN',
    );
  });
});

describe('MemoryIdempotencyStore', () => {
  idempotencyStoreContract({ make: (options) => new MemoryIdempotencyStore(options) });

  it('keeps memory flat by sweeping expired records as it writes', async () => {
    const store = new MemoryIdempotencyStore({ ttlMs: 100 });
    for (let i = 0; i < 1000; i++) {
      const now = i * 10;
      await store.begin(`k${i}`, 'w', 5, now);
      await store.succeed(`k${i}`, 'w', i, now);
    }
    expect(store.size).toBeLessThanOrEqual(11);
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
  const setup = () => ({
    store: new MemoryIdempotencyStore(),
    clock: new ManualClock(1000),
    random: new SeededRandom(7),
  });

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
    expect(await store.get(K, clock.now())).toMatchObject({
      status: 'succeeded',
      updatedAt: 1005,
      receipt: { messageId: 'm-1' },
    });
  });

  it('draws the owner id from the random stream (same seed, same owner)', async () => {
    const owners: string[] = [];
    for (let i = 0; i < 2; i++) {
      const { store, clock } = setup();
      await withIdempotency({ store, key: K, clock, random: new SeededRandom('same') }, async () =>
        owners.push((await store.get(K, 0))!.owner),
      );
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
    expect(err).toMatchObject({
      code: 'ERR_IDEMPOTENCY_IN_PROGRESS',
      retryAfterMs: 29_000,
      record: { key: K, status: 'in_progress' },
    });
    expect(calls).toBe(0);
    gate.resolve('sent');
    expect(await first).toEqual({ status: 'executed', value: 'sent' });
  });

  it('records a retryable failure, rethrows it, and lets the next call retake the key', async () => {
    const { store, clock, random } = setup();
    const boom = new Error('503 upstream');
    await expect(withIdempotency({ store, key: K, clock, random }, async () => Promise.reject(boom))).rejects.toBe(
      boom,
    );
    expect(await store.get(K, clock.now())).toMatchObject({ status: 'failed', error: '503 upstream', retryable: true });
    const retry = await withIdempotency({ store, key: K, clock, random }, async () => 'ok');
    expect(retry).toEqual({ status: 'executed', value: 'ok' });
    expect((await store.get(K, clock.now()))?.attempts).toBe(2);
  });

  it('makes a non-retryable failure final', async () => {
    const { store, clock, random } = setup();
    const isRetryable = (err: unknown) => !(err instanceof Error && err.message.startsWith('400'));
    await expect(
      withIdempotency({ store, key: K, clock, random, isRetryable }, async () =>
        Promise.reject(new Error('400 bad request')),
      ),
    ).rejects.toThrow('400 bad request');
    let calls = 0;
    const err = await withIdempotency({ store, key: K, clock, random }, async () => ++calls).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IdempotencyFailedError);
    expect(err).toMatchObject({
      code: 'ERR_IDEMPOTENCY_FAILED',
      record: { error: '400 bad request', retryable: false, attempts: 1 },
    });
    expect((err as Error).message).toContain('400 bad request');
    expect(calls).toBe(0);
  });

  it('stores a non-Error rejection as text', async () => {
    const { store, clock, random } = setup();
    await expect(withIdempotency({ store, key: K, clock, random }, async () => Promise.reject('nope'))).rejects.toBe(
      'nope',
    );
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
    await expect(withIdempotency({ store, key: K, clock, random, leaseMs: 0 }, fn)).rejects.toThrow(
      'withIdempotency.leaseMs must be a number > 0, got 0',
    );
    await expect(withIdempotency({ store, key: K, clock, random, renewEveryMs: -1 }, fn)).rejects.toThrow(
      'withIdempotency.renewEveryMs must be a number >= 0, got -1',
    );
    await expect(withIdempotency({ store, key: '', clock, random }, fn)).rejects.toThrow(OptionError);
    expect(await store.get(K, clock.now())).toBeUndefined();
  });
});
