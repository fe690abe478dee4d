import { ABOVE_0, AT_LEAST_0, atLeast, checkOneOf, checkRange, type Range, withDefaults } from './options.js';
import type { Random } from './random.js';

export type BackoffStrategy = 'full_jitter' | 'decorrelated_jitter' | 'exponential';
export const BACKOFF_STRATEGIES: readonly BackoffStrategy[] = ['full_jitter', 'decorrelated_jitter', 'exponential'];

export interface BackoffOptions {
  /**
   * `full_jitter` spreads retries over the whole window, which de-synchronises clients best
   * (AWS Architecture Blog, "Exponential Backoff and Jitter"); `decorrelated_jitter` grows
   * from the previous delay; `exponential` has no jitter (tests, or a single client).
   * @default 'full_jitter'
   */
  strategy: BackoffStrategy;
  /** First retry's ceiling (full jitter) or floor (decorrelated). @default 500 */
  baseMs: number;
  /** No delay exceeds this. @default 20_000 */
  capMs: number;
  /** Growth per retry. @default 2 */
  multiplier: number;
}

export const BACKOFF_DEFAULTS: Readonly<BackoffOptions> = Object.freeze({
  strategy: 'full_jitter',
  baseMs: 500,
  capMs: 20_000,
  multiplier: 2,
});

/** Each number option's range, checked by the constructor and by the scenario schema; `capMs` must also be at least `baseMs`. */
export const BACKOFF_RANGES: Readonly<Record<Exclude<keyof BackoffOptions, 'strategy'>, Range>> = Object.freeze({
  baseMs: ABOVE_0,
  capMs: AT_LEAST_0,
  multiplier: { min: 1 },
});

/**
 * Delay before retry `n` (1 for the first retry):
 *
 *   ceiling(n)    = min(cap, base · multiplier^(n−1))
 *   exponential   = ceiling(n)
 *   full jitter   = U[0, 1) · ceiling(n)                          ∈ [0, ceiling(n))
 *   decorrelated  = min(cap, base + U[0, 1) · (3·prev − base))     ∈ [base, cap]
 *                   with prev = the previous delay (base at first, and never below base)
 *
 * `delayMs` allocates nothing; the caller keeps `previousDelayMs` for the decorrelated form.
 */
export class Backoff {
  readonly options: Readonly<BackoffOptions>;
  private readonly random: Random;

  constructor(options: Partial<BackoffOptions> | undefined, random: Random) {
    const o = withDefaults(BACKOFF_DEFAULTS, options);
    checkOneOf('backoff.strategy', o.strategy, BACKOFF_STRATEGIES);
    const r = BACKOFF_RANGES;
    checkRange('backoff.baseMs', o.baseMs, r.baseMs);
    checkRange('backoff.capMs', o.capMs, atLeast(r.capMs, o.baseMs));
    checkRange('backoff.multiplier', o.multiplier, r.multiplier);
    this.options = Object.freeze(o);
    this.random = random;
  }

  delayMs(retry: number, previousDelayMs?: number): number {
    const { strategy, baseMs, capMs, multiplier } = this.options;
    if (strategy === 'decorrelated_jitter') {
      const prev = previousDelayMs !== undefined && previousDelayMs > baseMs ? previousDelayMs : baseMs;
      return Math.min(capMs, baseMs + this.random.next() * (prev * 3 - baseMs));
    }
    // retry < 1 (or NaN) is read as the first retry; a huge exponent overflows to Infinity,
    // which the cap absorbs.
    const n = Math.max(retry, 1);
    const ceiling = Math.min(capMs, baseMs * multiplier ** (n - 1));
    return strategy === 'exponential' ? ceiling : this.random.next() * ceiling;
  }
}

export type RetryPlan = { ok: true; delayMs: number } | { ok: false; reason: 'deadline'; wouldWaitMs: number };

/**
 * Whether to wait and retry. The upstream's `retry-after` is a lower bound on the wait (coming
 * back earlier only earns another 429):
 *
 *   delay = max(backoffMs, retryAfterMs ?? 0)
 *   retry only if now + delay + minAttemptMs ≤ deadlineAt
 *
 * otherwise fail fast: waiting for a retry that cannot finish in time only spends the budget.
 */
export function planRetry(args: {
  backoffMs: number;
  retryAfterMs?: number;
  now: number;
  deadlineAt: number;
  minAttemptMs: number;
}): RetryPlan {
  const backoff = Math.max(args.backoffMs, 0);
  const ra = args.retryAfterMs;
  const delay = ra !== undefined && ra > backoff ? ra : backoff;
  if (args.now + delay + args.minAttemptMs > args.deadlineAt)
    return { ok: false, reason: 'deadline', wouldWaitMs: delay };
  return { ok: true, delayMs: delay };
}
