import { OptionError } from './errors.js';
import {
  ABOVE_0,
  AT_LEAST_0,
  atLeast,
  checkNonEmptyString,
  checkRange,
  INTEGER_AT_LEAST_1,
  type Range,
  withDefaults,
} from './options.js';
import { MemoryStore, type StateStore } from './store.js';
import type { WindowCounterLike } from './window-counter.js';

export type BreakerState = 'closed' | 'open' | 'half_open';
/** `ignored`: the call says nothing about the downstream (e.g. the caller cancelled it). */
export type BreakerOutcome = 'success' | 'failure' | 'throttled' | 'ignored';
/** `throttle_saturated`: opened by its guard when the target's adaptive throttle hit its cap (see `open`). */
export type TripCause = 'failure_ratio' | 'slow_call_ratio' | 'throttled_ratio' | 'probe_failed' | 'throttle_saturated';
export type TransitionCause = TripCause | 'open_elapsed' | 'probes_succeeded';

export interface BreakerTransition {
  key: string;
  from: BreakerState;
  to: BreakerState;
  /** When it happened; for open -> half_open this is `openUntil`, however late it is noticed. */
  at: number;
  cause: TransitionCause;
  /** On transitions to `open`: how long it stays open. */
  openMs?: number;
}

export interface CircuitBreakerOptions {
  /** Sliding window for the triggers, in ms. @default 30_000 */
  windowMs: number;
  /** Buckets the window is cut into. @default 10 */
  buckets: number;
  /** No trigger fires below this many calls in the window. @default 20 */
  minimumCalls: number;
  /** Trip when failures / calls reaches this; `false` turns it off. @default 0.5 */
  failureRatio: number | false;
  /** Trip when slow / calls reaches this; `false` turns it off. @default false */
  slowCallRatio: number | false;
  /** A call slower than this (in ms) is slow, whatever its outcome. @default 30_000 */
  slowCallMs: number;
  /** Trip when throttled (429) / calls reaches this; `false` turns it off. @default 0.5 */
  throttledRatio: number | false;
  /** First open duration, in ms. @default 2_500 */
  openMs: number;
  /** Each consecutive trip (no close between) multiplies the open duration by this. @default 2 */
  openBackoffMultiplier: number;
  /**
   * Longest open duration, in ms. Recovery is noticed at most this long plus one gap between
   * calls after the downstream heals, so it is kept short. @default 2 × openMs
   */
  maxOpenMs: number;
  /**
   * Probe successes needed to close. The first probe goes alone, so a dead downstream gets one
   * probe per open interval; once it succeeded, the others may go together. @default 3
   */
  halfOpenProbes: number;
  /** Called synchronously on every transition. @default undefined */
  onTransition?: (t: BreakerTransition) => void;
}

export interface BreakerSnapshot {
  key: string;
  state: BreakerState;
  /** When the current state began (0 before the first transition). */
  since: number;
  /** Consecutive trips since the last close. */
  trips: number;
  /** When `open`: the time it stops refusing; otherwise 0. */
  openUntil: number;
  calls: number;
  failures: number;
  slow: number;
  throttled: number;
  /** When `half_open`: probes handed out whose result is not in yet. */
  probesInFlight: number;
}

export const CIRCUIT_BREAKER_DEFAULTS: Readonly<Omit<CircuitBreakerOptions, 'onTransition'>> = Object.freeze({
  windowMs: 30_000,
  buckets: 10,
  minimumCalls: 20,
  failureRatio: 0.5,
  slowCallRatio: false,
  slowCallMs: 30_000,
  throttledRatio: 0.5,
  openMs: 2_500,
  openBackoffMultiplier: 2,
  /** 2 × openMs: the default follows a given `openMs`. */
  maxOpenMs: 5_000,
  halfOpenProbes: 3,
});

/** A trip ratio's range; `false` turns its trigger off. */
const TRIP_RATIO: Range = Object.freeze({ min: 0, above: true, max: 1 });

type NumberOption = Exclude<keyof CircuitBreakerOptions, 'onTransition'>;

/**
 * Each option's range, checked by `resolveCircuitBreakerOptions` and by the scenario schema.
 * The trip ratios may also be `false`; `maxOpenMs` must also be at least `openMs`.
 */
export const CIRCUIT_BREAKER_RANGES: Readonly<Record<NumberOption, Range>> = Object.freeze({
  windowMs: ABOVE_0,
  buckets: { min: 1, max: 100_000, integer: true },
  minimumCalls: INTEGER_AT_LEAST_1,
  failureRatio: TRIP_RATIO,
  slowCallRatio: TRIP_RATIO,
  slowCallMs: AT_LEAST_0,
  throttledRatio: TRIP_RATIO,
  openMs: ABOVE_0,
  openBackoffMultiplier: { min: 1 },
  maxOpenMs: AT_LEAST_0,
  halfOpenProbes: INTEGER_AT_LEAST_1,
});

const TRIP_RATIOS = new Set<string>(['failureRatio', 'slowCallRatio', 'throttledRatio']);

/** Fills in defaults (an `undefined` option means the default) and checks every range. */
export function resolveCircuitBreakerOptions(
  options: Partial<CircuitBreakerOptions> = {},
  n = 'circuitBreaker',
): CircuitBreakerOptions {
  const o: CircuitBreakerOptions = withDefaults(CIRCUIT_BREAKER_DEFAULTS as CircuitBreakerOptions, options);
  if (options?.maxOpenMs === undefined && typeof o.openMs === 'number') o.maxOpenMs = 2 * o.openMs;
  for (const key of Object.keys(CIRCUIT_BREAKER_RANGES) as NumberOption[]) {
    if (o[key] === false && TRIP_RATIOS.has(key)) continue;
    checkRange(`${n}.${key}`, o[key], CIRCUIT_BREAKER_RANGES[key]);
  }
  checkRange(`${n}.maxOpenMs`, o.maxOpenMs, atLeast(CIRCUIT_BREAKER_RANGES.maxOpenMs, o.openMs));
  if (o.onTransition !== undefined && typeof o.onTransition !== 'function') {
    throw new OptionError(`${n}.onTransition must be a function, got ${typeof o.onTransition}`, `${n}.onTransition`);
  }
  return o;
}

// Fields of the sliding window.
const CALLS = 0;
const FAILURES = 1;
const SLOW = 2;
const THROTTLED = 3;
const FIELDS = 4;

/**
 * A closed / open / half-open breaker for one downstream key. Two synchronous steps per call:
 * `tryAcquire(now)` hands out a ticket (the generation) or -1, `record(ticket, ...)` reports
 * the outcome. Every transition bumps the generation, so a late result from a previous state
 * carries a stale ticket and is dropped.
 *
 * Open duration after the n-th consecutive trip: min(maxOpenMs, openMs · multiplier^(n−1)).
 * Half-open, the first probe goes alone: a dead downstream sees one call per open interval.
 *
 * Clearing the window on close: the store's window cannot be emptied (it may be shared), but
 * only closed-state calls are written to it, so everything in it at close time was written at
 * or before the trip that opened the breaker (`tripAt`). A bucketed window forgets a value
 * added at t once now ≥ t + windowMs. So until `tripAt + windowMs` the breaker reads its own
 * counts since the close (all within the last windowMs, as close > tripAt), and after that
 * the store's window, which by then holds only post-close calls.
 */
export class CircuitBreaker {
  readonly key: string;
  private readonly opts: CircuitBreakerOptions;
  private readonly window: WindowCounterLike;
  private readonly sinceClose = new Float64Array(FIELDS);
  /** Before this time the store's window may still hold calls from before the last close. */
  private cleanAt = -Infinity;
  private current: BreakerState = 'closed';
  private gen = 0;
  private since = 0;
  private trips = 0;
  private openUntil = 0;
  /** When the breaker last tripped out of `closed`. */
  private tripAt = 0;
  private probesGranted = 0;
  private probesSucceeded = 0;
  /**
   * Before this time a fast success cannot trip the breaker: the last check found at least
   * minimumCalls and no trigger firing, and until the window next drops a bucket (or switches
   * from its since-close counts to the store's) a success only lowers every ratio.
   */
  private quietUntil = -Infinity;

  /**
   * `key` names the breaker (in snapshots and events); its counts live in `store` under
   * `storeKey`, which a guard prefixes with its own name so that guards sharing a store do
   * not share breakers by accident. `optionName` is what option errors call the options (a
   * guard calls them `breaker`).
   */
  constructor(
    key: string,
    options: Partial<CircuitBreakerOptions> = {},
    store: StateStore = new MemoryStore(),
    storeKey = `circuitBreaker:${key}`,
    optionName = 'circuitBreaker',
  ) {
    this.key = checkNonEmptyString(`${optionName}.key`, key);
    this.opts = resolveCircuitBreakerOptions(options, optionName);
    const spec = { windowMs: this.opts.windowMs, buckets: this.opts.buckets, fields: FIELDS };
    this.window = store.windowCounter(storeKey, spec);
  }

  /** A ticket (the current generation, >= 0) if the call may go, -1 if refused. */
  tryAcquire(now: number): number {
    if (this.current === 'closed') return this.gen;
    if (this.current === 'open') {
      if (now < this.openUntil) return -1;
      this.toHalfOpen();
    }
    // The first probe goes alone (a dead downstream sees one per open interval); once it has
    // succeeded, the rest of the probes may go together, so closing takes two round trips.
    if (this.probesGranted >= this.opts.halfOpenProbes || (this.probesSucceeded === 0 && this.probesGranted > 0))
      return -1;
    this.probesGranted++;
    return this.gen;
  }

  /**
   * Opens a closed breaker from outside its own triggers: a guard does it when the target's
   * adaptive throttle drops at its cap (the upstream accepts next to nothing). The throttle
   * would otherwise go on dropping at low traffic with too few calls reaching this breaker
   * to trip it, and recovery would wait for the throttle's window to slide; open, the
   * breaker probes and closes as soon as the upstream answers again. No-op unless closed.
   */
  open(cause: 'throttle_saturated', now: number): void {
    if (this.current === 'closed') this.trip(cause, now);
  }

  /** True while half-open: a ticket handed out now is a probe. */
  get probing(): boolean {
    return this.current === 'half_open';
  }

  /** Reports the outcome of a call; record each ticket once. Stale tickets are ignored. */
  record(ticket: number, outcome: BreakerOutcome, latencyMs: number, now: number): void {
    if (ticket !== this.gen) return;
    if (this.current === 'closed') this.recordClosed(outcome, latencyMs, now);
    else if (this.current === 'half_open') this.recordProbe(outcome, latencyMs, now);
  }

  /** The state at `now`; an open breaker whose time is up becomes half-open here. */
  state(now: number): BreakerState {
    if (this.current === 'open' && now >= this.openUntil) this.toHalfOpen();
    return this.current;
  }

  /**
   * Time until a call could go (0 if it could now). While half-open with the probes it may
   * hand out taken it cannot be known — it depends on them — so the base `openMs` is given.
   */
  retryAfterMs(now: number): number {
    const state = this.state(now);
    if (state === 'open') return this.openUntil - now;
    const taken =
      this.probesGranted >= this.opts.halfOpenProbes || (this.probesSucceeded === 0 && this.probesGranted > 0);
    if (state === 'half_open' && taken) return this.opts.openMs;
    return 0;
  }

  generation(): number {
    return this.gen;
  }

  snapshot(now: number): BreakerSnapshot {
    const state = this.state(now);
    return {
      key: this.key,
      state,
      since: this.since,
      trips: this.trips,
      openUntil: state === 'open' ? this.openUntil : 0,
      calls: this.tally(CALLS, now),
      failures: this.tally(FAILURES, now),
      slow: this.tally(SLOW, now),
      throttled: this.tally(THROTTLED, now),
      probesInFlight: state === 'half_open' ? this.probesGranted - this.probesSucceeded : 0,
    };
  }

  private recordClosed(outcome: BreakerOutcome, latencyMs: number, now: number): void {
    if (outcome === 'ignored') return;
    this.count(CALLS, now);
    if (outcome === 'failure') this.count(FAILURES, now);
    else if (outcome === 'throttled') this.count(THROTTLED, now);
    const slow = latencyMs > this.opts.slowCallMs;
    if (slow) this.count(SLOW, now);
    if (outcome === 'success' && !slow && now < this.quietUntil) return;
    const cause = this.firedTrigger(now);
    if (cause !== null) this.trip(cause, now);
  }

  /**
   * A probe fails on failure or throttling, and on slowness when the slow-call trigger is on
   * (with it off, slowCallMs means nothing, and long LLM generations are not a fault).
   */
  private recordProbe(outcome: BreakerOutcome, latencyMs: number, now: number): void {
    if (outcome === 'ignored') {
      if (this.probesGranted > this.probesSucceeded) this.probesGranted--;
      return;
    }
    const slow = this.opts.slowCallRatio !== false && latencyMs > this.opts.slowCallMs;
    if (outcome !== 'success' || slow) return this.trip('probe_failed', now);
    // Guard against a ticket recorded twice: successes never outnumber probes handed out.
    if (this.probesSucceeded < this.probesGranted) this.probesSucceeded++;
    if (this.probesSucceeded >= this.opts.halfOpenProbes) this.close(now);
  }

  private firedTrigger(now: number): TripCause | null {
    const o = this.opts;
    const calls = this.tally(CALLS, now);
    if (calls < o.minimumCalls) return null;
    if (o.failureRatio !== false && this.tally(FAILURES, now) / calls >= o.failureRatio) return 'failure_ratio';
    if (o.slowCallRatio !== false && this.tally(SLOW, now) / calls >= o.slowCallRatio) return 'slow_call_ratio';
    if (o.throttledRatio !== false && this.tally(THROTTLED, now) / calls >= o.throttledRatio) return 'throttled_ratio';
    const stable = this.window.stableUntil(now);
    this.quietUntil = now < this.cleanAt && this.cleanAt < stable ? this.cleanAt : stable;
    return null;
  }

  private count(field: number, now: number): void {
    this.window.add(field, 1, now);
    // Read only before cleanAt (see tally), so counted only then.
    if (now < this.cleanAt) this.sinceClose[field] += 1;
  }

  private tally(field: number, now: number): number {
    return now < this.cleanAt ? this.sinceClose[field] : this.window.total(field, now);
  }

  private trip(cause: TripCause, now: number): void {
    const o = this.opts;
    if (this.current === 'closed') this.tripAt = now;
    this.trips++;
    // Infinity past float range is fine: min() caps it.
    const openMs = Math.min(o.maxOpenMs, o.openMs * o.openBackoffMultiplier ** (this.trips - 1));
    this.openUntil = now + openMs;
    this.move('open', now, cause, openMs);
  }

  private toHalfOpen(): void {
    this.probesGranted = 0;
    this.probesSucceeded = 0;
    this.move('half_open', this.openUntil, 'open_elapsed');
  }

  private close(now: number): void {
    this.trips = 0;
    this.sinceClose.fill(0);
    this.cleanAt = this.tripAt + this.opts.windowMs;
    this.move('closed', now, 'probes_succeeded');
  }

  private move(to: BreakerState, at: number, cause: TransitionCause, openMs?: number): void {
    const from = this.current;
    this.quietUntil = -Infinity;
    this.current = to;
    this.since = at;
    this.gen++;
    const listener = this.opts.onTransition;
    if (listener === undefined) return;
    const t: BreakerTransition = { key: this.key, from, to, at, cause };
    if (openMs !== undefined) t.openMs = openMs;
    listener(t);
  }
}
