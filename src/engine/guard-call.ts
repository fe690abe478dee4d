import { planRetry } from './backoff.js';
import type { CircuitBreaker } from './circuit-breaker.js';
import type { Classification, ErrorClass } from './classify.js';
import { DeferredOutcome } from './deferred-outcome.js';
import type { ShedReason } from './errors.js';
import type { GuardEvent } from './guard-events.js';
import type { GuardCore } from './guard-core.js';
import type { Reservation } from './limiter.js';
import type { Target } from './target.js';

/**
 * What a call should do next. Numbers, not objects, so the simulator can drive millions of
 * calls without allocating a step per decision; the details sit on the `GuardCall`.
 */
export const Step = {
  /** Make attempt `call.attempt` against target `call.target` now. */
  Attempt: 1,
  /** Wait `call.delayMs` (0 means at once), then ask `next` again. */
  Wait: 2,
  /** The upstream answered with success. */
  Done: 3,
  /** Refused locally: see `call.shedReason` and `call.retryAfterMs`. */
  Shed: 4,
  /** The upstream's answer ends the call (not retryable, or attempts exhausted): see `call.last`. */
  Fail: 5,
} as const;
export type StepCode = (typeof Step)[keyof typeof Step];

/**
 * One logical call going through a guard, as a synchronous state machine (the order of its
 * checks is in ARCHITECTURE.md, "The engine"). `next(now)` decides whether the next attempt may go
 * (budget → limit → deadline → breaker → throttle; a target that refuses locally — breaker
 * open, throttle drop, no budget for a retry — hands the call to the next target of the
 * fallback chain when there is one), `complete(...)` records the attempt's
 * outcome everywhere and decides: done, fail, fall back, or retry after a backoff that
 * honours `retry-after` and never waits past the deadline. `guard.run` and the simulator
 * both drive calls through these two methods, so they cannot disagree.
 */
export class GuardCall {
  /** Index of the current target in the guard's fallback chain. */
  targetIndex = 0;
  /** Attempts made on the current target (1 during the first). */
  attempt = 0;
  /** Attempts made on all targets. */
  attempts = 0;
  readonly deadlineAt: number;

  private readonly g: GuardCore;
  private ticket = -1;
  /**
   * What most calls never need (a retry, a shed, a reservation, a signal, limiter keys) lives
   * in a side object made on first use: a guarded call's cost is mostly its allocations.
   */
  private x: CallExtras | undefined;

  constructor(
    core: GuardCore,
    deadlineAt: number,
    tokens: number,
    keys: Record<string, string> | undefined,
    breakerKey?: string,
  ) {
    this.g = core;
    this.deadlineAt = deadlineAt;
    this.x = tokens === 0 && keys === undefined && breakerKey === undefined ? undefined : extras(tokens, keys);
    if (breakerKey !== undefined) this.x!.breakerKey = breakerKey;
  }

  /** After `Step.Wait`: how long to wait. */
  get delayMs(): number {
    return this.x?.delayMs ?? 0;
  }

  /** After `Step.Shed`: why. */
  get shedReason(): ShedReason | undefined {
    return this.x?.shedReason;
  }

  /** After `Step.Shed`: when trying again could work, if known. */
  get retryAfterMs(): number | undefined {
    return this.x?.retryAfterMs;
  }

  /** The classification of the last attempt that did not succeed (a success ends the call). */
  get last(): Classification | undefined {
    return this.x?.last;
  }

  /** Set by drivers that pass an AbortSignal to attempts. */
  get signal(): AbortSignal | undefined {
    return this.x?.signal;
  }

  set signal(s: AbortSignal | undefined) {
    if (s !== undefined || this.x !== undefined) this.more().signal = s;
  }

  /** Token estimate the limiter reserves per attempt. */
  get tokens(): number {
    return this.x?.tokens ?? 0;
  }

  /** Keys that pick the limiter's buckets. */
  get keys(): Record<string, string> | undefined {
    return this.x?.keys;
  }

  /** The current target: its name, origin, model, context window, rewrite. */
  get target(): Target {
    return this.g.targets[this.targetIndex];
  }

  /** Name of the current target. */
  get targetName(): string {
    return this.g.names[this.targetIndex];
  }

  /** True when the call has moved past the first target of the fallback chain. */
  get degraded(): boolean {
    return this.targetIndex > 0;
  }

  /** Whether the attempt about to be made (or being made) is a retry on its target. */
  get isRetry(): boolean {
    return this.x?.retrying === true;
  }

  /**
   * Called by an attempt that hands its answer to the caller before the answer is complete
   * (a stream committed at its first token): when the attempt returns, the call ends, and the
   * target's breaker and throttle wait for the returned handle's `settle(outcome)`. See
   * `DeferredOutcome`. Calls that never defer pay nothing for it.
   */
  defer(): DeferredOutcome {
    const d = new DeferredOutcome();
    this.more().deferred = d;
    return d;
  }

  /**
   * Called by an attempt whose committed answer broke (a cut or a stall after the caller got
   * its first token) and that asks for the rest of it (`stream.resume`), before it returns the
   * break as a retryable failure. From then on the call goes only to targets that declare
   * `continuation: 'prefill'` — the same target first (when it declares it and has attempts
   * left), then the next declaring one — and an answer that refuses the continuation (a 400)
   * moves it to the next declaring target, not to the caller. With none left the call fails
   * with its last classification. Each resumption is an attempt like any retry: budget,
   * breaker, throttle and `maxAttempts` count it.
   */
  resume(cls: ErrorClass): void {
    const x = this.more();
    x.resuming = true;
    const g = this.g;
    if (g.listener) g.emit({ type: 'resume', at: g.clock.now(), target: g.names[this.targetIndex], class: cls });
  }

  /** Whether the call is continuing a committed answer that broke (`resume`). */
  get resuming(): boolean {
    return this.x?.resuming === true;
  }

  /** The handle of a `defer()` made by the attempt in flight, if any. */
  get deferred(): DeferredOutcome | undefined {
    return this.x?.deferred;
  }

  /**
   * Counts a malformed event in the attempt's stream (skipped, not a failure): emits
   * `stream_malformed` for the current target.
   */
  malformed(): void {
    const g = this.g;
    if (g.listener) g.emit({ type: 'stream_malformed', at: g.clock.now(), target: g.names[this.targetIndex] });
  }

  /** Milliseconds of the deadline left at `now`. */
  remainingMs(now: number): number {
    const left = this.deadlineAt - now;
    return Math.max(left, 0);
  }

  next(now: number): StepCode {
    const g = this.g;
    for (;;) {
      const t = this.targetIndex;
      const retrying = this.x?.retrying === true;
      if (retrying && g.budget !== undefined && !g.budget.canRetry(now)) {
        // No retry here; a first attempt at the next target needs no budget.
        if (this.fallBack(now, 'budget')) continue;
        return this.shed('budget', now, undefined);
      }
      if (this.deadlineAt - now <= 0 || this.deadlineAt - now < g.minAttemptMs)
        return this.shed('deadline', now, undefined);
      if (g.limiter !== undefined) {
        const r = g.limiter.reserve({ tokens: this.tokens, keys: this.keys }, now);
        if (!r.ok) return this.shed('limit', now, r.retryAfterMs);
        this.more().reservation = r;
        if (g.listener) g.emit({ type: 'reserve', at: now, target: g.names[t], tokens: r.tokens });
      }
      let probe = false;
      if (g.breakers !== undefined) {
        const b = this.breaker();
        this.ticket = b.tryAcquire(now);
        if (this.ticket < 0) {
          this.releaseReservation(now);
          if (this.fallBack(now, 'breaker_open')) continue;
          return this.shed('breaker', now, b.retryAfterMs(now));
        }
        probe = b.probing;
      }
      // A breaker's probe is not the throttle's to drop: it is how recovery is noticed.
      if (probe) g.throttles?.[t].admit();
      else if (g.throttles !== undefined && !g.throttles[t].tryAcquire(now)) {
        this.dropTicket(now);
        // At its cap the throttle hands the target to its breaker, which probes for recovery.
        if (g.breakers !== undefined && g.throttles[t].saturated(now)) g.breakers[t].open('throttle_saturated', now);
        this.releaseReservation(now);
        if (this.fallBack(now, 'throttled')) continue;
        return this.shed('throttle', now, undefined);
      }
      if (g.budget !== undefined) {
        if (retrying) g.budget.withdraw(now);
        else g.budget.recordFirst(now);
      }
      this.attempt++;
      this.attempts++;
      if (g.listener) g.emit({ type: 'attempt', at: now, target: g.names[t], attempt: this.attempt });
      return Step.Attempt;
    }
  }

  /**
   * Records the outcome of the attempt that `next` allowed. `usedTokens` is what the upstream
   * reported (prompt + completion), or −1 when unknown: then a success keeps its reservation
   * and a failure is refunded (providers do not bill refused requests).
   */
  complete(cls: Classification, latencyMs: number, usedTokens: number, now: number): StepCode {
    const g = this.g;
    const t = this.targetIndex;
    const x = this.x;
    if (x?.deferred !== undefined) {
      const d = x.deferred;
      x.deferred = undefined;
      if (cls.action === 'done') return this.handOver(d, latencyMs);
      d.drop();
    }
    if (this.ticket >= 0) {
      this.breaker().record(this.ticket, cls.breaker, latencyMs, now);
      this.ticket = -1;
    }
    if (g.throttles !== undefined) g.throttles[t].record(cls.accept, now);
    if (x?.reservation !== undefined) this.settleReservation(cls, usedTokens, now);
    if (cls.action === 'done') return Step.Done;
    this.more().last = cls;
    if (this.x!.resuming) return this.resumeNext(cls, now);
    switch (cls.class) {
      case 'timeout':
      case 'stream_stall':
        // A silent target: go elsewhere first; retry here only when there is nowhere to go.
        if (cls.action === 'retry' && g.options.onTimeout === 'fallback' && this.fallBack(now, cls.class))
          return this.waitFor(0);
        break;
      case 'context_length':
        if (cls.action === 'fallback')
          return this.fallBack(now, cls.class, g.targets[t].contextWindow ?? -1) ? this.waitFor(0) : Step.Fail;
        break;
      case 'content_filter':
        if (g.options.onContentFilter === 'fallback')
          return this.fallBack(now, cls.class) ? this.waitFor(0) : Step.Fail;
        break;
    }
    switch (cls.action) {
      case 'fail':
        return Step.Fail;
      case 'fallback':
        return this.fallBack(now, cls.class) ? this.waitFor(0) : Step.Fail;
      default:
        return this.planNext(cls, now);
    }
  }

  /**
   * What follows a failed attempt of a call that continues a broken answer: a retryable
   * failure is retried on the same target when it declares continuation (a silent one, with
   * `onTimeout: 'fallback'`, is left at once when another declaring target is left), a refusal (a 400: the prefill rejected) or a
   * target that does not declare it moves to the next declaring target; the caller's own
   * errors (a cancel) and auth end it. The original break, kept by the attempt, is what the
   * caller sees when none is left.
   */
  private resumeNext(cls: Classification, now: number): StepCode {
    const g = this.g;
    if (cls.class === 'cancelled' || cls.class === 'auth') return Step.Fail;
    const silent = (cls.class === 'timeout' || cls.class === 'stream_stall') && g.options.onTimeout === 'fallback';
    const here = cls.action === 'retry' && this.target.continuation === 'prefill' && this.attempt < g.maxAttempts;
    if (here && !silent) return this.planNext(cls, now);
    if (this.fallBack(now, cls.action === 'retry' ? cls.class : 'no_continuation')) return this.waitFor(0);
    // A silent target with nowhere else to go is tried again, as any timeout is.
    return here ? this.planNext(cls, now) : Step.Fail;
  }

  /** The caller gave up on an attempt in flight: free what it held; the throttle counts no accept. */
  abandon(now: number): void {
    const d = this.x?.deferred;
    if (d !== undefined) {
      this.x!.deferred = undefined;
      d.drop();
    }
    this.dropTicket(now);
    this.releaseReservation(now);
    this.g.throttles?.[this.targetIndex].record(false, now);
  }

  /** A deferred attempt returned: the call is done; its ticket, slot and reservation go to the handle. */
  private handOver(d: DeferredOutcome, latencyMs: number): StepCode {
    const g = this.g;
    const t = this.targetIndex;
    const x = this.x!;
    const ticket = this.ticket;
    this.ticket = -1;
    const r = x.reservation;
    x.reservation = undefined;
    d.arm(g, t, ticket >= 0 ? this.breaker() : undefined, ticket, g.throttles?.[t], r, latencyMs);
    return Step.Done;
  }

  /** The breaker this call uses on its current target. */
  private breaker(): CircuitBreaker {
    return this.g.breakerFor(this.targetIndex, this.x?.breakerKey);
  }

  private planNext(cls: Classification, now: number): StepCode {
    const g = this.g;
    if (this.attempt >= g.maxAttempts) return this.fallBack(now, 'attempts_exhausted') ? this.waitFor(0) : Step.Fail;
    if (g.budget !== undefined && !g.budget.canRetry(now))
      return this.fallBack(now, 'budget') ? this.waitFor(0) : this.shed('budget', now, undefined);
    // delayMs still holds the previous wait (0 on a fresh target): decorrelated jitter grows from it.
    const backoffMs = g.backoff.delayMs(this.attempt, this.delayMs);
    const plan = planRetry({
      backoffMs,
      retryAfterMs: cls.retryAfterMs,
      now,
      deadlineAt: this.deadlineAt,
      minAttemptMs: g.minAttemptMs,
    });
    if (!plan.ok) return this.shed('deadline', now, plan.wouldWaitMs);
    this.more().retrying = true;
    if (g.listener)
      g.emit({
        type: 'retry',
        at: now,
        target: g.names[this.targetIndex],
        attempt: this.attempt,
        delayMs: plan.delayMs,
        class: cls.class,
      });
    return this.waitFor(plan.delayMs);
  }

  private waitFor(ms: number): StepCode {
    this.more().delayMs = ms;
    return Step.Wait;
  }

  /**
   * Moves to the next available target (breaker not open; with `minWindow`, a context window
   * larger than it), as a fresh call there. False if there is none.
   */
  private fallBack(now: number, why: Extract<GuardEvent, { type: 'fallback' }>['why'], minWindow = -1): boolean {
    const g = this.g;
    const key = this.x?.breakerKey;
    let next = -1;
    const resuming = this.x?.resuming === true;
    for (let i = this.targetIndex + 1; i < g.targets.length; i++) {
      if (minWindow >= 0 && !((g.targets[i].contextWindow ?? 0) > minWindow)) continue;
      if (resuming && g.targets[i].continuation !== 'prefill') continue;
      if (g.breakers !== undefined && g.breakerFor(i, key).state(now) === 'open') continue;
      next = i;
      break;
    }
    if (next < 0) return false;
    if (g.listener) g.emit({ type: 'fallback', at: now, from: g.names[this.targetIndex], to: g.names[next], why });
    this.targetIndex = next;
    this.attempt = 0;
    const x = this.x;
    if (x !== undefined) {
      x.retrying = false;
      x.delayMs = 0;
    }
    return true;
  }

  private more(): CallExtras {
    return (this.x ??= extras(0, undefined));
  }

  private shed(reason: ShedReason, now: number, retryAfterMs: number | undefined): StepCode {
    const x = this.more();
    x.shedReason = reason;
    x.retryAfterMs = retryAfterMs;
    const g = this.g;
    if (g.listener) {
      const e: GuardEvent = { type: 'shed', at: now, target: g.names[this.targetIndex], reason, retry: this.isRetry };
      if (retryAfterMs !== undefined) e.retryAfterMs = retryAfterMs;
      g.emit(e);
    }
    return Step.Shed;
  }

  private dropTicket(now: number): void {
    if (this.ticket < 0) return;
    this.breaker().record(this.ticket, 'ignored', 0, now);
    this.ticket = -1;
  }

  private releaseReservation(now: number): void {
    const x = this.x;
    if (x?.reservation === undefined) return;
    x.reservation.release(now);
    x.reservation = undefined;
  }

  private settleReservation(cls: Classification, usedTokens: number, now: number): void {
    const x = this.x!;
    const r = x.reservation;
    if (r === undefined) return;
    x.reservation = undefined;
    const actual = usedTokens >= 0 ? usedTokens : cls.action === 'done' ? r.tokens : 0;
    r.reconcile(actual, now);
    const g = this.g;
    if (g.listener)
      g.emit({ type: 'reconcile', at: now, target: g.names[this.targetIndex], reserved: r.tokens, actual });
  }
}

interface CallExtras {
  /** After `Step.Wait`: how long to wait. */
  delayMs: number;
  /** The attempt about to be made (or being made) is a retry on its target. */
  retrying: boolean;
  tokens: number;
  keys: Record<string, string> | undefined;
  shedReason: ShedReason | undefined;
  retryAfterMs: number | undefined;
  last: Classification | undefined;
  signal: AbortSignal | undefined;
  reservation: Reservation | undefined;
  breakerKey: string | undefined;
  deferred: DeferredOutcome | undefined;
  /** Continuing a committed answer that broke: only declaring targets (`resume`). */
  resuming: boolean;
}

function extras(tokens: number, keys: Record<string, string> | undefined): CallExtras {
  return {
    delayMs: 0,
    retrying: false,
    tokens,
    keys,
    shedReason: undefined,
    retryAfterMs: undefined,
    last: undefined,
    signal: undefined,
    reservation: undefined,
    breakerKey: undefined,
    deferred: undefined,
    resuming: false,
  };
}
