import { classify, classOf, type AttemptResult, type Classification, type ErrorClass } from './classify.js';
import type { AdaptiveThrottle } from './adaptive-throttle.js';
import type { CircuitBreaker } from './circuit-breaker.js';
import type { GuardCore } from './guard-core.js';
import type { Reservation } from './limiter.js';

/** What `settle` takes: an error class, a classification, or an attempt result to classify. */
export type AttemptOutcome = ErrorClass | Classification | AttemptResult;

/**
 * The final outcome of an attempt that was handed to the caller before it finished: a stream
 * committed at its first token. The attempt calls `ctx.defer()` before it returns; the call
 * then ends as soon as the attempt returns (a success ends it; the retry loop is not held),
 * while the target's breaker ticket, throttle slot and token reservation stay open until
 * `settle` reports how the attempt really ended — a stream that broke after commit is then a
 * failure of its target like any other. Settle exactly once; later calls are ignored. An
 * attempt that throws, or whose value the guard classifies as a failure, is recorded at once
 * and its handle's `settle` does nothing.
 */
export class DeferredOutcome {
  private state: 'open' | 'armed' | 'done' = 'open';
  /** A settle that came before the guard recorded the attempt's return. */
  private early: { outcome: AttemptOutcome; usedTokens: number } | undefined;
  private core: GuardCore | undefined;
  private target = 0;
  private breaker: CircuitBreaker | undefined;
  private ticket = -1;
  private throttle: AdaptiveThrottle | undefined;
  private reservation: Reservation | undefined;
  private latencyMs = 0;
  /** What else the attempt holds until it is settled (its concurrency slot). */
  private held: (() => void) | undefined;

  /** True once the outcome is recorded (or the handle was voided by a failed attempt). */
  get settled(): boolean {
    return this.state === 'done';
  }

  /**
   * Reports the attempt's final outcome: `'success'` for a stream that ended with its terminal
   * signal, `'stream_cut'` / `'stream_stall'` (or a `StreamError` as `{ error }`) for one
   * that broke. `usedTokens` reconciles the token reservation (−1: unknown). Returns the
   * classification recorded, or undefined when the handle was already settled or voided.
   */
  settle(outcome: AttemptOutcome, usedTokens = -1): Classification | undefined {
    if (this.state === 'done') return undefined;
    if (this.state === 'open') {
      this.early ??= { outcome, usedTokens };
      return undefined;
    }
    this.state = 'done';
    this.free();
    const g = this.core!;
    const now = g.clock.now();
    const cls = toClassification(outcome, now);
    if (this.ticket >= 0) this.breaker!.record(this.ticket, cls.breaker, this.latencyMs, now);
    this.throttle?.record(cls.accept, now);
    const r = this.reservation;
    if (r !== undefined) {
      const actual = usedTokens >= 0 ? usedTokens : cls.action === 'done' ? r.tokens : 0;
      r.reconcile(actual, now);
      if (g.listener) g.emit({ type: 'reconcile', at: now, target: g.names[this.target], reserved: r.tokens, actual });
    }
    if (g.listener) g.emit({ type: 'settle', at: now, target: g.names[this.target], class: cls.class });
    this.core = undefined;
    this.breaker = undefined;
    this.throttle = undefined;
    this.reservation = undefined;
    return cls;
  }

  /** @internal The guard recorded the attempt's return as a success: what `settle` must close. */
  arm(
    core: GuardCore,
    target: number,
    breaker: CircuitBreaker | undefined,
    ticket: number,
    throttle: AdaptiveThrottle | undefined,
    reservation: Reservation | undefined,
    latencyMs: number,
  ): void {
    if (this.state !== 'open') return;
    this.state = 'armed';
    this.core = core;
    this.target = target;
    this.breaker = breaker;
    this.ticket = ticket;
    this.throttle = throttle;
    this.reservation = reservation;
    this.latencyMs = latencyMs;
    const early = this.early;
    if (early !== undefined) {
      this.early = undefined;
      this.settle(early.outcome, early.usedTokens);
    }
  }

  /** @internal The attempt failed or was given up on: it was recorded already; settle is a no-op. */
  drop(): void {
    this.state = 'done';
    this.early = undefined;
    this.free();
  }

  /** @internal Something to free when the outcome is in (or the handle is voided). */
  hold(release: () => void): void {
    if (this.state === 'done') release();
    else this.held = release;
  }

  private free(): void {
    const release = this.held;
    this.held = undefined;
    release?.();
  }
}

function toClassification(outcome: AttemptOutcome, now: number): Classification {
  if (typeof outcome === 'string') return classOf(outcome);
  if ('action' in outcome && 'class' in outcome) return outcome as Classification;
  return classify(outcome as AttemptResult, now);
}
