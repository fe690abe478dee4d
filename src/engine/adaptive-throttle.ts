import { ABOVE_0, AT_LEAST_0, checkRanges, type Range, withDefaults } from './options.js';
import type { Random } from './random.js';
import { MemoryStore, type StateStore } from './store.js';
import type { WindowCounterLike } from './window-counter.js';

export interface AdaptiveThrottleOptions {
  /** Aggressiveness: the client sends up to K × accepts before it starts dropping. @default 2 */
  k: number;
  /** How long requests and accepts are remembered; keep it longer than p99 latency. @default 120_000 */
  windowMs: number;
  /** Buckets the window slides by. @default 120 */
  buckets: number;
  /** Upper bound on the drop probability (Envoy's admission control caps it too). @default 0.9 */
  maxDropProbability: number;
  /**
   * Below this many requests in the window the throttle never drops: with a handful of
   * requests the formula swings wildly (one failure out of one gives p = 0.5). Envoy's
   * admission control has the same kind of floor (`rps_threshold`). @default 10
   */
  minRequests: number;
}

export const ADAPTIVE_THROTTLE_DEFAULTS: AdaptiveThrottleOptions = {
  k: 2,
  windowMs: 120_000,
  buckets: 120,
  maxDropProbability: 0.9,
  minRequests: 10,
};

/** Each option's range, checked by the constructor and by the scenario schema. */
export const ADAPTIVE_THROTTLE_RANGES: Readonly<Record<keyof AdaptiveThrottleOptions, Range>> = Object.freeze({
  k: { min: 1, max: 1000 },
  windowMs: ABOVE_0,
  buckets: { min: 1, max: 100_000, integer: true },
  maxDropProbability: { min: 0, max: 1 },
  minRequests: AT_LEAST_0,
});

/**
 * The window's two fields: answers that were accepts, and all other answers (drops, refusals,
 * failures). Their sum is the requests whose answer is known, counted when dropped or when
 * their outcome is recorded; the commonest answer, an accept, is one add.
 */
const ACCEPTS = 0;
const REFUSED = 1;

/**
 * Client-side adaptive throttling from the Google SRE book (chapter 21):
 *
 *     p = max(0, (requests − K × accepts) / (requests + 1))
 *
 * `requests` counts every request the application asked for, including the ones this
 * throttle dropped — counted before the call, so a failing upstream drives p up even while
 * little reaches it. `accepts` counts requests the upstream answered usefully. With K = 2 the
 * upstream sees at most about twice what it accepts. Both counts live in a sliding window, so
 * once failures stop (or traffic stops) p falls back to 0 by itself as the window slides.
 *
 * Requests still in flight are left out of the formula until their answer is known
 * (`requests` below means requests − in flight): an LLM call takes seconds, and while the
 * window fills at start-up the calls not yet answered would otherwise look like refusals —
 * with 2 s calls at 40/s, 80 unanswered requests and no accept yet give p ≈ 1 on a healthy
 * upstream. Dropped requests are answered at once (by the drop), so they count in full.
 */
export class AdaptiveThrottle {
  readonly options: AdaptiveThrottleOptions;
  private readonly window: WindowCounterLike;
  private readonly k: number;
  private readonly maxP: number;
  private readonly minRequests: number;
  /** Allowed requests whose outcome is not recorded yet. */
  private inFlight = 0;
  /**
   * Until this time the counts come from `since` (answers since the last `forget`), not from
   * the window, which may still hold answers from before it (a shared store cannot be cleared).
   */
  private cleanAt = -Infinity;
  private readonly since = [0, 0];
  private readonly random: Random;

  constructor(
    options: Partial<AdaptiveThrottleOptions> | undefined,
    random: Random,
    store: StateStore = new MemoryStore(),
    key = 'throttle',
  ) {
    const o = withDefaults(ADAPTIVE_THROTTLE_DEFAULTS, options);
    checkRanges('throttle', o, ADAPTIVE_THROTTLE_RANGES);
    this.options = o;
    this.k = o.k;
    this.maxP = o.maxDropProbability;
    this.minRequests = o.minRequests;
    this.random = random;
    this.window = store.windowCounter(key, { windowMs: o.windowMs, buckets: o.buckets, fields: 2 });
  }

  /** The drop probability the next request would face. */
  dropProbability(now: number): number {
    const requests = this.known(now);
    if (requests < this.minRequests) return 0;
    const p = (requests - this.k * this.total(ACCEPTS, now)) / (requests + 1);
    return p <= 0 ? 0 : Math.min(p, this.maxP);
  }

  /**
   * Lets the request through with probability 1 − p (p from the window as it was before this
   * request); it counts in the window once its answer is known — at once when dropped, at
   * `record` otherwise. Draws a random number only when p > 0.
   */
  tryAcquire(now: number): boolean {
    // p as in dropProbability, inlined: this runs once per request.
    const accepts = this.total(ACCEPTS, now);
    const requests = accepts + this.total(REFUSED, now);
    if (requests >= this.minRequests) {
      const p = (requests - this.k * accepts) / (requests + 1);
      if (p > 0 && this.random.next() < Math.min(p, this.maxP)) {
        this.add(REFUSED, now); // a drop is its own answer
        return false;
      }
    }
    this.inFlight++;
    return true;
  }

  /** Whether the drop probability is at its cap: the upstream accepts next to nothing. */
  saturated(now: number): boolean {
    return this.maxP > 0 && this.dropProbability(now) >= this.maxP;
  }

  /**
   * Lets a request through without a draw: a circuit breaker's probe, which must reach the
   * upstream to learn whether it recovered (the throttle would drop it with the very history
   * the probe is testing). Record it like any allowed request.
   */
  admit(): void {
    this.inFlight++;
  }

  /**
   * Forgets the answers so far: the upstream proved healthy again (its breaker closed after
   * its probes succeeded), so refusals from the outage no longer say anything about it and
   * must not keep dropping requests for the rest of the window.
   */
  forget(now: number): void {
    this.since[ACCEPTS] = 0;
    this.since[REFUSED] = 0;
    this.cleanAt = now + this.options.windowMs;
  }

  /**
   * The outcome of an allowed request: `accepted` when the upstream answered usefully. Every
   * allowed request must be recorded once (a request given up on records `false`).
   */
  record(accepted: boolean, now: number): void {
    if (this.inFlight > 0) this.inFlight--;
    this.add(accepted ? ACCEPTS : REFUSED, now);
  }

  private add(field: number, now: number): void {
    this.window.add(field, 1, now);
    if (now < this.cleanAt) this.since[field]++;
  }

  /** A bucketed window forgets a value added at t once now >= t + windowMs, hence cleanAt. */
  private total(field: number, now: number): number {
    return now < this.cleanAt ? this.since[field] : this.window.total(field, now);
  }

  /**
   * Requests in the window whose answer is known (dropped, or allowed and recorded), counted
   * when the answer came. Counted in the window rather than as requests − this process's
   * in-flight count, so that with a shared store other processes' unanswered requests are left
   * out too: they would otherwise look like refusals while their calls run.
   */
  private known(now: number): number {
    return this.total(ACCEPTS, now) + this.total(REFUSED, now);
  }

  /** `requests`: answered in the window plus this process's in flight. */
  snapshot(now: number): { requests: number; inFlight: number; accepts: number; dropProbability: number } {
    return {
      requests: this.known(now) + this.inFlight,
      inFlight: this.inFlight,
      accepts: this.total(ACCEPTS, now),
      dropProbability: this.dropProbability(now),
    };
  }
}
