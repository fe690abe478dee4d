import { OptionError } from './errors.js';
import { ABOVE_0, checkNonEmptyString, checkOneOf, checkRange, type Range } from './options.js';
import { MemoryStore, type StateStore } from './store.js';
import type { BucketSpec, TokenBucketLike } from './token-bucket.js';

/** One rate limit, e.g. tenant requests/s or model tokens/min. */
export interface LimitDimension {
  /** Names the dimension in rejections and in store keys, e.g. `tenant_rps`, `model_tpm`. */
  name: string;
  /** `requests`: each call costs 1. `tokens`: each call costs its token estimate. */
  unit: 'requests' | 'tokens';
  /** Tokens added per `per`. */
  rate: number;
  per: 'second' | 'minute';
  /**
   * Capacity of the bucket. For `requests` it must be at least 1, or no call could ever fit.
   * @default rate (one period's worth), but at least 1 for `requests`
   */
  burst?: number;
  /**
   * Which key of `ReserveRequest.keys` picks the bucket (`tenant`, `model`, `tool`, ...), one
   * bucket per distinct value. A reservation without that key shares the bucket of key `'*'`.
   * @default undefined (one bucket for the whole dimension)
   */
  keyBy?: string;
}

export interface LimiterOptions {
  dimensions: LimitDimension[];
  /** Where the buckets live; a shared store makes many processes share one limit. @default a new MemoryStore */
  store?: StateStore;
}

export interface ReserveRequest {
  /** The call's token estimate, charged to `tokens` dimensions. @default 0 */
  tokens?: number;
  /** Bucket keys by name, e.g. `{ tenant: 'acme', model: 'gpt-4o' }`. */
  keys?: Record<string, string>;
}

export interface LimitRejection {
  ok: false;
  /** The dimension that refused (the one with the longest wait when several did). */
  dimension: string;
  /** Its bucket key value (`'*'` for a missing key), undefined for a dimension without `keyBy`. */
  key: string | undefined;
  /** Whole milliseconds until this cost would fit in every refusing bucket; Infinity if it never can. */
  retryAfterMs: number;
  /** `exceeds_capacity`: the cost is larger than the bucket's burst, waiting will not help. */
  reason: 'rate' | 'exceeds_capacity';
}

export type ReserveResult = Reservation | LimitRejection;

interface Dim {
  readonly name: string;
  readonly tokens: boolean;
  readonly keyBy: string | undefined;
  readonly spec: BucketSpec;
  /** `limit:${name}:` — the key value is appended. */
  readonly prefix: string;
  /** The bucket of a dimension without keyBy, resolved once. */
  readonly fixed: TokenBucketLike | undefined;
  readonly byKey: Map<string, TokenBucketLike>;
}

/**
 * A limit's number ranges, checked by the limiter and by the scenario schema: `rate` above 0,
 * and `burst` above 0 for tokens but at least 1 for requests (a bucket that never holds one
 * request would refuse every call).
 */
export const LIMIT_RANGES = Object.freeze({
  rate: ABOVE_0,
  tokenBurst: ABOVE_0,
  requestBurst: { min: 1 },
}) satisfies Record<string, Range>;

/** Key value used when a reservation does not carry a dimension's `keyBy` key. */
const SHARED_KEY = '*';

/** Token counts must be finite: Infinity or NaN would poison a shared bucket for good. */
function checkTokens(name: string, value: number): void {
  if (!(value >= 0 && value < Infinity))
    throw new OptionError(`${name} must be a finite number >= 0, got ${String(value)}`, name, { value });
}

function keyValue(d: Dim, keys: Record<string, string> | undefined): string {
  const value = keys?.[d.keyBy as string];
  return typeof value === 'string' ? value : SHARED_KEY;
}

/**
 * Tokens held for one call across every dimension. `reconcile` settles the token dimensions
 * against the usage the upstream reported; `release` gives everything back (the call never
 * reached the upstream). Only the first of those calls counts.
 */
export class Reservation {
  readonly ok = true as const;
  private settled = false;

  /** @internal Made by `Limiter.reserve`. */
  constructor(
    private readonly buckets: readonly TokenBucketLike[],
    private readonly isTokens: readonly boolean[],
    readonly tokens: number,
  ) {}

  /** Charges (as debt if short) or refunds the difference `actualTokens − tokens` on token dimensions. */
  reconcile(actualTokens: number, now: number): void {
    if (this.settled) return;
    checkTokens('reconcile.actualTokens', actualTokens);
    this.settled = true;
    const diff = actualTokens - this.tokens;
    if (diff === 0) return;
    for (let i = 0; i < this.buckets.length; i++) {
      if (!this.isTokens[i]) continue;
      if (diff > 0) this.buckets[i].charge(diff, now);
      else this.buckets[i].refund(-diff, now);
    }
  }

  /** Refunds everything this reservation took, requests included. */
  release(now: number): void {
    if (this.settled) return;
    this.settled = true;
    for (let i = 0; i < this.buckets.length; i++) {
      this.buckets[i].refund(this.isTokens[i] ? this.tokens : 1, now);
    }
  }
}

/**
 * Several token buckets checked as one: a call is admitted only if every dimension has room,
 * and then takes from all of them, so a refusal never leaves a partial charge behind.
 * Reserve-then-reconcile: take the estimate before the call, settle the difference after it.
 * A bucket in debt (a past under-estimate) refuses every call until refill has paid the debt.
 */
export class Limiter {
  private readonly dims: Dim[];
  private readonly isTokens: boolean[];
  private readonly store: StateStore;
  /** Buckets resolved for the current reserve; reused so the hot path does not allocate. */
  private readonly scratch: TokenBucketLike[];
  /** When no dimension is keyed, every reservation can share this array. */
  private readonly fixedBuckets: readonly TokenBucketLike[] | undefined;

  constructor(options: LimiterOptions) {
    if (!options || !Array.isArray(options.dimensions)) {
      throw new OptionError(
        `limiter.dimensions must be an array, got ${String(options?.dimensions)}`,
        'limiter.dimensions',
      );
    }
    this.store = options.store ?? new MemoryStore();
    const seen = new Map<string, number>();
    this.dims = options.dimensions.map((d, i) => this.compile(d, i, seen));
    this.isTokens = this.dims.map((d) => d.tokens);
    this.scratch = this.dims.map((d) => d.fixed as TokenBucketLike);
    this.fixedBuckets = this.dims.every((d) => d.fixed) ? this.scratch.slice() : undefined;
  }

  /** Takes the call's cost from every dimension, or nothing and says which one refused. */
  reserve(req: ReserveRequest, now: number): ReserveResult {
    const tokens = req.tokens ?? 0;
    checkTokens('reserve.tokens', tokens);
    const n = this.dims.length;
    let worst = -1;
    let worstWait = 0;
    for (let i = 0; i < n; i++) {
      const d = this.dims[i];
      const bucket = d.fixed ?? this.keyed(d, req.keys);
      this.scratch[i] = bucket;
      const wait = bucket.waitMs(d.tokens ? tokens : 1, now);
      if (wait > worstWait) {
        worst = i;
        worstWait = wait;
      }
    }
    if (worst >= 0) return this.reject(worst, worstWait, req.keys);
    for (let i = 0; i < n; i++) {
      if (!this.scratch[i].tryTake(this.isTokens[i] ? tokens : 1, now)) return this.rollback(i, tokens, now, req.keys);
    }
    return new Reservation(this.fixedBuckets ?? this.scratch.slice(), this.isTokens, tokens);
  }

  /** Every bucket this limiter has used so far, for dashboards and tests. */
  snapshot(
    now: number,
  ): Array<{ dimension: string; key: string | undefined; available: number; capacity: number; debt: number }> {
    const out: Array<{
      dimension: string;
      key: string | undefined;
      available: number;
      capacity: number;
      debt: number;
    }> = [];
    for (const d of this.dims) {
      const entries: Array<[string | undefined, TokenBucketLike]> = d.fixed ? [[undefined, d.fixed]] : [...d.byKey];
      for (const [key, b] of entries) {
        out.push({ dimension: d.name, key, available: b.available(now), capacity: b.spec.capacity, debt: b.debt(now) });
      }
    }
    return out;
  }

  private keyed(d: Dim, keys: Record<string, string> | undefined): TokenBucketLike {
    const value = keyValue(d, keys);
    let bucket = d.byKey.get(value);
    if (bucket === undefined) {
      bucket = this.store.tokenBucket(d.prefix + value, d.spec);
      d.byKey.set(value, bucket);
    }
    return bucket;
  }

  private reject(i: number, wait: number, keys: Record<string, string> | undefined): LimitRejection {
    const d = this.dims[i];
    const key = d.keyBy === undefined ? undefined : keyValue(d, keys);
    // Whole milliseconds, rounded up: a retry-after hint that is never early.
    const retryAfterMs = Math.ceil(wait);
    return { ok: false, dimension: d.name, key, retryAfterMs, reason: wait === Infinity ? 'exceeds_capacity' : 'rate' };
  }

  /**
   * A take failed after every check passed (only possible if a shared store's bucket changed
   * in between): give back what was taken so the refusal stays atomic.
   */
  private rollback(
    failed: number,
    tokens: number,
    now: number,
    keys: Record<string, string> | undefined,
  ): LimitRejection {
    for (let j = 0; j < failed; j++) this.scratch[j].refund(this.isTokens[j] ? tokens : 1, now);
    const cost = this.isTokens[failed] ? tokens : 1;
    return this.reject(failed, Math.max(1, this.scratch[failed].waitMs(cost, now)), keys);
  }

  private compile(d: LimitDimension, i: number, seen: Map<string, number>): Dim {
    const at = `limiter.dimensions[${i}]`;
    const name = checkNonEmptyString(`${at}.name`, d?.name);
    const earlier = seen.get(name);
    if (earlier !== undefined)
      throw new OptionError(
        `${at}.name ${JSON.stringify(name)} is already used by limiter.dimensions[${earlier}]`,
        `${at}.name`,
      );
    seen.set(name, i);
    const unit = checkOneOf(`${at}.unit`, d.unit, ['requests', 'tokens'] as const);
    const rate = checkRange(`${at}.rate`, d.rate, LIMIT_RANGES.rate);
    const per = checkOneOf(`${at}.per`, d.per, ['second', 'minute'] as const);
    const burst = this.burst(at, unit, rate, d.burst);
    const keyBy = d.keyBy === undefined ? undefined : checkNonEmptyString(`${at}.keyBy`, d.keyBy);
    const spec: BucketSpec = { capacity: burst, refillPerSec: per === 'second' ? rate : rate / 60 };
    const prefix = `limit:${name}:`;
    const fixed = keyBy === undefined ? this.store.tokenBucket(prefix + SHARED_KEY, spec) : undefined;
    return { name, tokens: unit === 'tokens', keyBy, spec, prefix, fixed, byKey: new Map() };
  }

  private burst(at: string, unit: 'requests' | 'tokens', rate: number, burst: number | undefined): number {
    if (burst === undefined) return unit === 'requests' ? Math.max(1, rate) : rate;
    return checkRange(`${at}.burst`, burst, unit === 'requests' ? LIMIT_RANGES.requestBurst : LIMIT_RANGES.tokenBurst);
  }
}
