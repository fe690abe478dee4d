import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  Limiter,
  type Reservation,
  type LimitDimension,
  type LimitRejection,
  type ReserveResult,
} from '../../src/engine/limiter.js';
import { MemoryStore } from '../../src/engine/store.js';
import { OptionError } from '../../src/engine/errors.js';

// 10 requests/s per tenant (100 ms per request), 6000 tokens/min per model (0.1 token per ms).
const TENANT_RPS: LimitDimension = { name: 'tenant_rps', unit: 'requests', rate: 10, per: 'second', keyBy: 'tenant' };
const MODEL_TPM: LimitDimension = { name: 'model_tpm', unit: 'tokens', rate: 6000, per: 'minute', keyBy: 'model' };
const A = { tenant: 'a', model: 'm' };

function limiter(...dimensions: LimitDimension[]): Limiter {
  return new Limiter({ dimensions: dimensions.length > 0 ? dimensions : [TENANT_RPS, MODEL_TPM] });
}

function ok(r: ReserveResult): Reservation {
  if (!r.ok) throw new Error(`expected a reservation, got a rejection by ${r.dimension}`);
  return r;
}

function rejected(r: ReserveResult): LimitRejection {
  if (r.ok) throw new Error('expected a rejection, got a reservation');
  return r;
}

function available(l: Limiter, dimension: string, key: string | undefined, now: number): number {
  const entry = l.snapshot(now).find((e) => e.dimension === dimension && e.key === key);
  if (!entry) throw new Error(`no bucket ${dimension}/${key}`);
  return entry.available;
}

describe('Limiter.reserve', () => {
  it('refuses on the requests dimension once the tenant burst is spent', () => {
    const l = limiter();
    for (let i = 0; i < 10; i++) ok(l.reserve({ tokens: 1, keys: A }, 0));
    expect(l.reserve({ tokens: 1, keys: A }, 0)).toEqual({
      ok: false,
      dimension: 'tenant_rps',
      key: 'a',
      retryAfterMs: 100,
      reason: 'rate',
    });
  });

  it('refuses on the tokens dimension when the estimate does not fit', () => {
    const l = limiter();
    ok(l.reserve({ tokens: 5000, keys: A }, 0));
    const r = rejected(l.reserve({ tokens: 2000, keys: A }, 0));
    expect(r).toMatchObject({ dimension: 'model_tpm', key: 'm', reason: 'rate' });
    // 1000 tokens missing at 0.1 token/ms.
    expect(r.retryAfterMs).toBe(10_000);
  });

  it('gives a retryAfterMs that is exactly when the call fits', () => {
    const l = limiter();
    for (let i = 0; i < 10; i++) ok(l.reserve({ keys: A }, 0));
    const r = rejected(l.reserve({ keys: A }, 0));
    expect(l.reserve({ keys: A }, r.retryAfterMs - 1).ok).toBe(false);
    expect(l.reserve({ keys: A }, r.retryAfterMs).ok).toBe(true);
  });

  it('gives the tokens dimension retryAfterMs exactly, too', () => {
    const l = limiter();
    ok(l.reserve({ tokens: 5000, keys: A }, 0));
    const r = rejected(l.reserve({ tokens: 2000, keys: A }, 0));
    expect(l.reserve({ tokens: 2000, keys: A }, r.retryAfterMs - 1).ok).toBe(false);
    expect(l.reserve({ tokens: 2000, keys: A }, r.retryAfterMs).ok).toBe(true);
  });

  it('names the dimension with the longest wait when several refuse', () => {
    const l = limiter();
    for (let i = 0; i < 10; i++) ok(l.reserve({ tokens: 500, keys: A }, 0)); // 5000 of 6000 tokens
    const r = rejected(l.reserve({ tokens: 2000, keys: A }, 0));
    // tenant_rps would wait 100 ms, model_tpm 10 000 ms: the call fits only after both.
    expect(r).toEqual({ ok: false, dimension: 'model_tpm', key: 'm', retryAfterMs: 10_000, reason: 'rate' });
  });

  it('takes nothing from any dimension when one refuses', () => {
    const l = limiter();
    ok(l.reserve({ tokens: 5000, keys: A }, 0));
    expect(available(l, 'tenant_rps', 'a', 0)).toBe(9);
    rejected(l.reserve({ tokens: 2000, keys: A }, 0));
    rejected(l.reserve({ tokens: 2000, keys: A }, 0));
    expect(available(l, 'tenant_rps', 'a', 0)).toBe(9);
    expect(available(l, 'model_tpm', 'm', 0)).toBe(1000);
  });

  it('keeps one bucket per keyBy value', () => {
    const l = limiter();
    for (let i = 0; i < 10; i++) ok(l.reserve({ keys: A }, 0));
    expect(l.reserve({ keys: A }, 0).ok).toBe(false);
    expect(l.reserve({ keys: { tenant: 'b', model: 'm' } }, 0).ok).toBe(true);
    expect(available(l, 'tenant_rps', 'b', 0)).toBe(9);
  });

  it("puts reservations without the keyBy key in the shared '*' bucket", () => {
    const l = limiter(TENANT_RPS);
    for (let i = 0; i < 10; i++) ok(l.reserve({}, 0));
    expect(l.reserve({ keys: { model: 'x' } }, 0)).toMatchObject({ ok: false, dimension: 'tenant_rps', key: '*' });
    expect(l.reserve({ keys: { tenant: 'a' } }, 0).ok).toBe(true);
  });

  it('uses one bucket for a dimension without keyBy, reported with key undefined', () => {
    const l = limiter({ name: 'global', unit: 'requests', rate: 2, per: 'second' });
    ok(l.reserve({ keys: { tenant: 'a' } }, 0));
    ok(l.reserve({ keys: { tenant: 'b' } }, 0));
    expect(l.reserve({}, 0)).toEqual({
      ok: false,
      dimension: 'global',
      key: undefined,
      retryAfterMs: 500,
      reason: 'rate',
    });
    expect(l.snapshot(0)).toEqual([{ dimension: 'global', key: undefined, available: 0, capacity: 2, debt: 0 }]);
  });

  it('says exceeds_capacity with an infinite retryAfterMs when the cost is over the burst', () => {
    const l = limiter();
    expect(l.reserve({ tokens: 6001, keys: A }, 0)).toEqual({
      ok: false,
      dimension: 'model_tpm',
      key: 'm',
      retryAfterMs: Infinity,
      reason: 'exceeds_capacity',
    });
    expect(l.reserve({ tokens: 6000, keys: A }, 0).ok).toBe(true);
  });

  it('keeps its buckets in the store under limit:<dimension>:<key>', () => {
    const store = new MemoryStore();
    const l = new Limiter({ dimensions: [TENANT_RPS], store });
    ok(l.reserve({ keys: { tenant: 'acme' } }, 0));
    expect(store.tokenBucket('limit:tenant_rps:acme', { capacity: 10, refillPerSec: 10 }).available(0)).toBe(9);
    // A second limiter on the same store shares the bucket (many gateways, one limit).
    const other = new Limiter({ dimensions: [TENANT_RPS], store });
    ok(other.reserve({ keys: { tenant: 'acme' } }, 0));
    expect(store.tokenBucket('limit:tenant_rps:acme', { capacity: 10, refillPerSec: 10 }).available(0)).toBe(8);
  });

  it('converts per minute and defaults the burst to one period', () => {
    const l = limiter({ name: 'rpm', unit: 'requests', rate: 60, per: 'minute' });
    for (let i = 0; i < 60; i++) ok(l.reserve({}, 0));
    expect(rejected(l.reserve({}, 0)).retryAfterMs).toBe(1000);
  });

  it('defaults a requests burst to at least 1 so a slow rate still admits calls', () => {
    const l = limiter({ name: 'slow', unit: 'requests', rate: 0.5, per: 'second' });
    ok(l.reserve({}, 0));
    expect(rejected(l.reserve({}, 0)).retryAfterMs).toBe(2000);
  });

  it('rejects a bad token estimate', () => {
    expect(() => limiter().reserve({ tokens: -1 }, 0)).toThrow(/reserve\.tokens must be a finite number >= 0, got -1/);
    expect(() => limiter().reserve({ tokens: NaN }, 0)).toThrow(OptionError);
  });
});

describe('Reservation', () => {
  it('charges an under-estimate on token dimensions only', () => {
    const l = limiter();
    ok(l.reserve({ tokens: 1000, keys: A }, 0)).reconcile(1500, 0);
    expect(available(l, 'model_tpm', 'm', 0)).toBe(4500);
    expect(available(l, 'tenant_rps', 'a', 0)).toBe(9);
  });

  it('refunds an over-estimate', () => {
    const l = limiter();
    ok(l.reserve({ tokens: 1000, keys: A }, 0)).reconcile(300, 0);
    expect(available(l, 'model_tpm', 'm', 0)).toBe(5700);
  });

  it('release gives back every dimension, requests included', () => {
    const l = limiter();
    ok(l.reserve({ tokens: 1000, keys: A }, 0)).release(0);
    expect(available(l, 'model_tpm', 'm', 0)).toBe(6000);
    expect(available(l, 'tenant_rps', 'a', 0)).toBe(10);
  });

  it('settles once: later reconcile or release calls do nothing', () => {
    const l = limiter();
    const r = ok(l.reserve({ tokens: 1000, keys: A }, 0));
    r.reconcile(2000, 0);
    r.reconcile(5000, 0);
    r.release(0);
    expect(available(l, 'model_tpm', 'm', 0)).toBe(4000);
    expect(available(l, 'tenant_rps', 'a', 0)).toBe(9);
  });

  it('turns a charge beyond what is left into debt that refuses calls until refill pays it', () => {
    const l = limiter();
    ok(l.reserve({ tokens: 5000, keys: A }, 0)).reconcile(8000, 0);
    expect(l.snapshot(0).find((e) => e.dimension === 'model_tpm')).toMatchObject({ available: 0, debt: 2000 });
    // Even a zero-token call waits for the debt: 2000 tokens at 0.1 token/ms.
    const r = rejected(l.reserve({ tokens: 0, keys: A }, 0));
    expect(r).toMatchObject({ dimension: 'model_tpm', retryAfterMs: 20_000 });
    expect(l.reserve({ tokens: 0, keys: A }, 19_999).ok).toBe(false);
    expect(l.reserve({ tokens: 0, keys: A }, 20_000).ok).toBe(true);
  });

  it('rejects a bad actual count without settling', () => {
    const l = limiter();
    const r = ok(l.reserve({ tokens: 100, keys: A }, 0));
    expect(() => r.reconcile(Infinity, 0)).toThrow(
      /reconcile\.actualTokens must be a finite number >= 0, got Infinity/,
    );
    r.reconcile(50, 0);
    expect(available(l, 'model_tpm', 'm', 0)).toBe(5950);
  });
});

describe('Limiter options', () => {
  const bad: Array<[unknown, RegExp]> = [
    [[{ ...TENANT_RPS, rate: -5 }], /limiter\.dimensions\[0\]\.rate must be a number > 0, got -5/],
    [[MODEL_TPM, { ...TENANT_RPS, rate: 0 }], /limiter\.dimensions\[1\]\.rate must be a number > 0, got 0/],
    [[{ ...TENANT_RPS, name: '' }], /limiter\.dimensions\[0\]\.name must be a non-empty string, got ""/],
    [
      [TENANT_RPS, { ...MODEL_TPM, name: 'tenant_rps' }],
      /limiter\.dimensions\[1\]\.name "tenant_rps" is already used by limiter\.dimensions\[0\]/,
    ],
    [[{ ...TENANT_RPS, unit: 'bytes' }], /limiter\.dimensions\[0\]\.unit must be one of requests, tokens, got "bytes"/],
    [[{ ...TENANT_RPS, per: 'hour' }], /limiter\.dimensions\[0\]\.per must be one of second, minute, got "hour"/],
    [[{ ...MODEL_TPM, burst: 0 }], /limiter\.dimensions\[0\]\.burst must be a number > 0, got 0/],
    [[{ ...TENANT_RPS, burst: 0.5 }], /limiter\.dimensions\[0\]\.burst must be a number >= 1, got 0\.5/],
    [[{ ...TENANT_RPS, keyBy: '' }], /limiter\.dimensions\[0\]\.keyBy must be a non-empty string/],
    ['nope', /limiter\.dimensions must be an array/],
  ];
  for (const [dimensions, message] of bad) {
    it(`throws ${message.source}`, () => {
      expect(() => new Limiter({ dimensions: dimensions as LimitDimension[] })).toThrow(OptionError);
      expect(() => new Limiter({ dimensions: dimensions as LimitDimension[] })).toThrow(message);
    });
  }

  it('admits everything with no dimensions', () => {
    expect(new Limiter({ dimensions: [] }).reserve({ tokens: 1e9 }, 0).ok).toBe(true);
  });
});

// ---- properties -------------------------------------------------------------------------

type Op =
  | { kind: 'reserve'; tenant: string; model: string; tokens: number }
  | { kind: 'reconcile'; index: number; actual: number }
  | { kind: 'release'; index: number }
  | { kind: 'advance'; ms: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant('reserve' as const),
    tenant: fc.constantFrom('a', 'b'),
    model: fc.constantFrom('m', 'n'),
    tokens: fc.integer({ min: 0, max: 7000 }),
  }),
  fc.record({ kind: fc.constant('reconcile' as const), index: fc.nat(), actual: fc.integer({ min: 0, max: 12_000 }) }),
  fc.record({ kind: fc.constant('release' as const), index: fc.nat() }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 20_000 }) }),
);

describe('Limiter properties', () => {
  it('keeps every bucket within [0, capacity] with non-negative debt', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 60 }), (ops) => {
        const l = limiter();
        const held: Reservation[] = [];
        let now = 0;
        for (const op of ops) {
          if (op.kind === 'advance') now += op.ms;
          else if (op.kind === 'reserve') {
            const r = l.reserve({ tokens: op.tokens, keys: { tenant: op.tenant, model: op.model } }, now);
            if (r.ok) held.push(r);
          } else if (held.length > 0) {
            const r = held[op.index % held.length];
            if (op.kind === 'reconcile') r.reconcile(op.actual, now);
            else r.release(now);
          }
          for (const e of l.snapshot(now)) {
            expect(e.available).toBeGreaterThanOrEqual(0);
            expect(e.available).toBeLessThanOrEqual(e.capacity);
            expect(e.debt).toBeGreaterThanOrEqual(0);
          }
        }
      }),
    );
  });

  it('conserves tokens: with no time passing, taken net of debt equals what the calls used', () => {
    fc.assert(
      fc.property(
        fc.array(
          opArb.filter((op) => op.kind !== 'advance'),
          { maxLength: 60 },
        ),
        (ops) => {
          const l = limiter({ ...MODEL_TPM, keyBy: undefined });
          const held: Array<{ r: Reservation; used: number; settled: boolean }> = [];
          for (const op of ops) {
            if (op.kind === 'reserve') {
              const r = l.reserve({ tokens: op.tokens }, 0);
              if (r.ok) held.push({ r, used: op.tokens, settled: false });
            } else if (held.length > 0) {
              const h = held[op.index % held.length];
              if (op.kind === 'reconcile') h.r.reconcile(op.actual, 0);
              else h.r.release(0);
              // Only the first settle counts: reconcile uses `actual`, release uses nothing.
              if (!h.settled) h.used = op.kind === 'reconcile' ? op.actual : 0;
              h.settled = true;
            }
          }
          const [e] = l.snapshot(0);
          const used = held.reduce((s, h) => s + h.used, 0);
          expect(e.capacity - e.available + e.debt).toBe(used);
        },
      ),
    );
  });

  it('gives a retryAfterMs within 1 ms of when the call fits, under random histories', () => {
    // Exact to the ms in real arithmetic (see the tests above). The bucket refills in floating
    // point, though, so when the true wait is a whole number of ms the computed one can land an
    // ulp either side of it: the call then fits 1 ms after the hint, or already 1 ms before it.
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100_000 }),
        fc.constantFrom('second' as const, 'minute' as const),
        fc.array(
          fc.tuple(
            fc.integer({ min: 0, max: 3000 }),
            fc.integer({ min: 0, max: 5000 }),
            fc.integer({ min: 0, max: 8000 }),
          ),
          { minLength: 1, maxLength: 20 },
        ),
        (rate, per, steps) => {
          const replay = (): { l: Limiter; now: number; last: ReserveResult } => {
            const l = limiter({ name: 'tpm', unit: 'tokens', rate, per, burst: rate * 3 });
            let now = 0;
            let last: ReserveResult = { ok: false, dimension: '', key: undefined, retryAfterMs: 0, reason: 'rate' };
            for (const [dt, tokens, actual] of steps) {
              now += dt;
              last = l.reserve({ tokens }, now);
              if (last.ok) last.reconcile(actual, now);
            }
            return { l, now, last };
          };
          const { now, last } = replay();
          if (last.ok || last.retryAfterMs === Infinity) return;
          const tokens = steps[steps.length - 1][1];
          expect(replay().l.reserve({ tokens }, now + last.retryAfterMs + 1).ok).toBe(true);
          if (last.retryAfterMs >= 2)
            expect(replay().l.reserve({ tokens }, now + last.retryAfterMs - 2).ok).toBe(false);
        },
      ),
    );
  });
});
