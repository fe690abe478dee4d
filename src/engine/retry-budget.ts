import { ABOVE_0, AT_LEAST_0, checkRanges, type Range, withDefaults } from './options.js';
import { MemoryStore, type StateStore } from './store.js';
import type { WindowCounterLike } from './window-counter.js';

export interface RetryBudgetOptions {
  /** Tokens deposited per first attempt; a retry costs one. 0.1 = retries at most 10 % of traffic. @default 0.1 */
  ratio: number;
  /** How long deposits and withdrawals are remembered. @default 10_000 */
  windowMs: number;
  /** Buckets the window slides by. @default 10 */
  buckets: number;
  /** Retries allowed per second whatever the traffic, so a quiet service can still retry. @default 1 */
  minRetriesPerSec: number;
}

export const RETRY_BUDGET_DEFAULTS: RetryBudgetOptions = {
  ratio: 0.1,
  windowMs: 10_000,
  buckets: 10,
  minRetriesPerSec: 1,
};

/** Each option's range, checked by the constructor and by the scenario schema. */
export const RETRY_BUDGET_RANGES: Readonly<Record<keyof RetryBudgetOptions, Range>> = Object.freeze({
  ratio: { min: 0, max: 1000 },
  windowMs: ABOVE_0,
  buckets: { min: 1, max: 10_000, integer: true },
  minRetriesPerSec: AT_LEAST_0,
});

const FIRSTS = 0;
const RETRIES = 1;

/**
 * A retry budget in the manner of Finagle's and gRPC's: over the sliding window,
 *
 *     retries <= ratio × firstAttempts + minRetriesPerSec × windowSeconds
 *
 * Each logical call deposits once, on its first attempt (`recordFirst`); each retry withdraws
 * one (`tryRetry`). Both counts live in one bucketed window, so the balance is recomputed
 * from what is still in the window — nothing "halves every tick" and nothing is counted twice.
 * A retry is allowed only if, after it, the inequality above still holds.
 */
export class RetryBudget {
  readonly options: RetryBudgetOptions;
  private readonly window: WindowCounterLike;
  private readonly ratio: number;
  private readonly reserve: number;

  constructor(options?: Partial<RetryBudgetOptions>, store: StateStore = new MemoryStore(), key = 'retry-budget') {
    const o = withDefaults(RETRY_BUDGET_DEFAULTS, options);
    checkRanges('retryBudget', o, RETRY_BUDGET_RANGES);
    this.options = o;
    this.ratio = o.ratio;
    this.reserve = (o.minRetriesPerSec * o.windowMs) / 1000;
    this.window = store.windowCounter(key, { windowMs: o.windowMs, buckets: o.buckets, fields: 2 });
  }

  /** A logical call made its first attempt: deposit `ratio`. */
  recordFirst(now: number): void {
    this.window.add(FIRSTS, 1, now);
  }

  /** Whether one more retry fits now, without spending it. */
  canRetry(now: number): boolean {
    return this.window.total(RETRIES, now) + 1 <= this.ratio * this.window.total(FIRSTS, now) + this.reserve;
  }

  /** Spends one retry (call after `canRetry` said yes and the retry is really going out). */
  withdraw(now: number): void {
    this.window.add(RETRIES, 1, now);
  }

  /** `canRetry` and `withdraw` in one step. */
  tryRetry(now: number): boolean {
    if (!this.canRetry(now)) return false;
    this.window.add(RETRIES, 1, now);
    return true;
  }

  /** Retries still allowed in the current window (may be fractional). */
  balance(now: number): number {
    return this.ratio * this.window.total(FIRSTS, now) + this.reserve - this.window.total(RETRIES, now);
  }

  snapshot(now: number): { firsts: number; retries: number; balance: number } {
    return {
      firsts: this.window.total(FIRSTS, now),
      retries: this.window.total(RETRIES, now),
      balance: this.balance(now),
    };
  }
}
