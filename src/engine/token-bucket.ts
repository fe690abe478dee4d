import { checkNumber, checkPositive } from './options.js';

export interface BucketSpec {
  /** Most tokens the bucket holds (the burst). */
  capacity: number;
  /** Tokens added per second. */
  refillPerSec: number;
  /** Tokens at first use. @default capacity */
  initial?: number;
}

/** Checks a bucket's settings, naming the bad one (`limit:tpm.capacity must be …`); returns a copy. */
export function checkBucketSpec(spec: BucketSpec, name: string): BucketSpec {
  checkPositive(`${name}.capacity`, spec.capacity);
  checkNumber(`${name}.refillPerSec`, spec.refillPerSec, 0);
  if (spec.initial !== undefined) checkNumber(`${name}.initial`, spec.initial, 0, spec.capacity);
  return { ...spec };
}

/** What a store hands out for a token bucket. `tokens` never leaves [0, capacity]. */
export interface TokenBucketLike {
  readonly spec: BucketSpec;
  /** Tokens available at `now` (after refill, after paying debt). */
  available(now: number): number;
  /** Debt still to be paid from future refill (charges beyond what was there). */
  debt(now: number): number;
  /** Takes `n` if they are all there; takes nothing otherwise. */
  tryTake(n: number, now: number): boolean;
  /** Takes `n` whatever is there: what is missing becomes debt, paid first by refill. */
  charge(n: number, now: number): void;
  /** Gives `n` back: pays debt first, the rest up to capacity. */
  refund(n: number, now: number): void;
  /** Milliseconds until `n` would fit; 0 if it fits now, Infinity if it never can. */
  waitMs(n: number, now: number): number;
}

/**
 * A token bucket that refills continuously (`refillPerSec`) up to `capacity`. Forced charges
 * (reconciling an under-estimate) do not push it below zero: the shortfall becomes debt that
 * refill pays before anything becomes available, so `tokens - debt` is conserved exactly.
 */
export class TokenBucket implements TokenBucketLike {
  readonly spec: BucketSpec;
  private readonly ratePerMs: number;
  private readonly capacity: number;
  private tokens: number;
  private owed = 0;
  private last = -Infinity;

  constructor(spec: BucketSpec, name = 'bucket') {
    this.spec = checkBucketSpec(spec, name);
    this.ratePerMs = spec.refillPerSec / 1000;
    this.capacity = spec.capacity;
    this.tokens = spec.initial ?? spec.capacity;
  }

  available(now: number): number {
    this.refill(now);
    return this.tokens;
  }

  debt(now: number): number {
    this.refill(now);
    return this.owed;
  }

  tryTake(n: number, now: number): boolean {
    this.refill(now);
    if (n > this.tokens) return false;
    this.tokens -= n;
    return true;
  }

  charge(n: number, now: number): void {
    this.refill(now);
    if (n <= this.tokens) {
      this.tokens -= n;
    } else {
      this.owed += n - this.tokens;
      this.tokens = 0;
    }
  }

  refund(n: number, now: number): void {
    this.refill(now);
    this.credit(n);
  }

  waitMs(n: number, now: number): number {
    this.refill(now);
    if (n > this.capacity) return Infinity;
    const missing = n + this.owed - this.tokens;
    if (missing <= 0) return 0;
    return this.ratePerMs > 0 ? missing / this.ratePerMs : Infinity;
  }

  private refill(now: number): void {
    const last = this.last;
    if (now <= last) return;
    this.last = now;
    if (last !== -Infinity) this.credit((now - last) * this.ratePerMs);
  }

  private credit(n: number): void {
    if (this.owed > 0) {
      const paid = Math.min(n, this.owed);
      this.owed -= paid;
      n -= paid;
    }
    const t = this.tokens + n;
    this.tokens = Math.min(t, this.capacity);
  }
}
