import { AdaptiveThrottle } from './adaptive-throttle.js';
import { Backoff } from './backoff.js';
import { CircuitBreaker, type BreakerTransition } from './circuit-breaker.js';
import type { Clock } from './clock.js';
import { ConcurrencyLimiter } from './concurrency-limiter.js';
import { FallbackChain } from './fallback-chain.js';
import { GuardCall } from './guard-call.js';
import type { GuardEvent, GuardListener } from './guard-events.js';
import { resolveGuardOptions, type GuardOptions, type ResolvedGuardOptions } from './guard-options.js';
import { Limiter } from './limiter.js';
import type { Random } from './random.js';
import { RetryBudget } from './retry-budget.js';
import { MemoryStore, type StateStore } from './store.js';
import type { Target } from './target.js';

export interface StartOptions {
  /** Absolute deadline on the guard's clock. @default now + the guard's timeoutMs */
  deadlineAt?: number;
  /** Token estimate for the limiter's token dimensions (prompt + max output). @default 0 */
  tokens?: number;
  /** Keys that pick the limiter's buckets, e.g. `{ tenant: 't1', model: 'gpt-4o' }`. */
  keys?: Record<string, string>;
  /**
   * A breaker of its own for this kind of call on each target (a tool, a tenant): calls with
   * the same key share it, calls without one use the target's. Keys are meant to be a small,
   * bounded set (never one per request). The throttle stays per target. @default none
   */
  breakerKey?: string;
}

export interface GuardSnapshot {
  at: number;
  budget?: { firsts: number; retries: number; balance: number };
  targets: Array<{
    name: string;
    throttle?: { requests: number; inFlight?: number; accepts: number; dropProbability: number };
    breaker?: ReturnType<CircuitBreaker['snapshot']>;
  }>;
  limits: ReturnType<Limiter['snapshot']>;
  concurrency?: { inFlight: number; queued: number };
}

/**
 * The primitives a guard composes, built once from its options, plus the synchronous entry
 * point `start`. Everything a `GuardCall` touches per decision is a plain field here.
 */
export class GuardCore {
  readonly options: ResolvedGuardOptions;
  readonly clock: Clock;
  readonly random: Random;
  readonly store: StateStore;
  readonly targets: readonly Target[];
  /** `targets[i].name`, for events. */
  readonly names: readonly string[];
  readonly maxAttempts: number;
  readonly minAttemptMs: number;
  /** Default deadline of a call, ms from its start. */
  readonly timeoutMs: number;
  readonly backoff: Backoff;
  readonly chain: FallbackChain<Target>;
  readonly budget: RetryBudget | undefined;
  readonly throttles: AdaptiveThrottle[] | undefined;
  readonly breakers: CircuitBreaker[] | undefined;
  readonly limiter: Limiter | undefined;
  readonly concurrency: ConcurrencyLimiter | undefined;
  /** Breakers of calls that pass a `breakerKey`, per target, made on first use. */
  private readonly keyed: Array<Map<string, CircuitBreaker>> | undefined;
  listener: GuardListener | undefined = undefined;
  private listeners: GuardListener[] = [];

  constructor(options: GuardOptions = {}) {
    const o = resolveGuardOptions(options);
    this.options = o;
    this.clock = o.clock;
    this.random = o.random;
    this.store = options.store ?? new MemoryStore();
    this.targets = o.targets;
    this.names = o.targets.map((t) => t.name);
    this.maxAttempts = o.maxAttempts;
    this.minAttemptMs = o.minAttemptMs;
    this.timeoutMs = o.timeoutMs;
    this.backoff = new Backoff(o.backoff, o.random);
    const prefix = o.name;
    this.budget = o.retryBudget === false ? undefined : new RetryBudget(o.retryBudget, this.store, `${prefix}:budget`);
    // One throttle and one breaker per state key: targets naming the same origin and model share them.
    const throttleOf = new Map<string, AdaptiveThrottle>();
    const breakerOf = new Map<string, CircuitBreaker>();
    this.throttles =
      o.throttle === false
        ? undefined
        : o.targets.map((t) =>
            getOrMake(
              throttleOf,
              t.key,
              () => new AdaptiveThrottle(o.throttle || {}, o.random, this.store, `${prefix}:throttle:${t.key}`),
            ),
          );
    this.breakers =
      o.breaker === false
        ? undefined
        : o.targets.map((t) =>
            getOrMake(breakerOf, t.key, () =>
              this.makeBreaker(t.name, `${prefix}:breaker:${t.key}`, throttleOf.get(t.key)),
            ),
          );
    this.keyed = o.breaker === false ? undefined : o.targets.map(() => new Map());
    this.limiter = o.limits.length > 0 ? new Limiter({ dimensions: o.limits, store: this.store }) : undefined;
    this.concurrency = o.concurrency === false ? undefined : new ConcurrencyLimiter(o.concurrency);
    const breakers = this.breakers;
    this.chain = new FallbackChain(
      o.targets.map((t, i) => ({
        name: t.name,
        value: t,
        available: breakers ? (now: number) => breakers[i].state(now) !== 'open' : undefined,
      })),
    );
    if (options.onEvent) this.subscribe(options.onEvent);
  }

  /** `options.name`: what metrics and state keys call it. */
  get name(): string {
    return this.options.name;
  }

  /** Begins a logical call at `now`; drive it with `call.next(now)` and `call.complete(...)`. */
  start(now: number, opts?: StartOptions): GuardCall {
    if (opts === undefined) return new GuardCall(this, now + this.timeoutMs, 0, undefined);
    return new GuardCall(this, opts.deadlineAt ?? now + this.timeoutMs, opts.tokens ?? 0, opts.keys, opts.breakerKey);
  }

  /** The breaker a call with `breakerKey` uses on target `index` (the target's own without a key). */
  breakerFor(index: number, breakerKey: string | undefined): CircuitBreaker {
    if (breakerKey === undefined) return this.breakers![index];
    const map = this.keyed![index];
    let b = map.get(breakerKey);
    if (b === undefined) {
      const t = this.targets[index];
      b = this.makeBreaker(`${t.name}#${breakerKey}`, `${this.options.name}:breaker:${t.key}#${breakerKey}`);
      map.set(breakerKey, b);
    }
    return b;
  }

  /** Adds a listener for `GuardEvent`s; returns a function that removes it. */
  subscribe(listener: GuardListener): () => void {
    this.listeners.push(listener);
    this.listener = this.listeners.length === 1 ? listener : this.fanOut;
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
      this.listener =
        this.listeners.length === 0 ? undefined : this.listeners.length === 1 ? this.listeners[0] : this.fanOut;
    };
  }

  emit(event: GuardEvent): void {
    this.listener?.(event);
  }

  snapshot(now: number): GuardSnapshot {
    return {
      at: now,
      budget: this.budget?.snapshot(now),
      targets: this.targets.map(({ name }, i) => ({
        name,
        throttle: this.throttles?.[i].snapshot(now),
        breaker: this.breakers?.[i].snapshot(now),
      })),
      limits: this.limiter?.snapshot(now) ?? [],
      concurrency: this.concurrency
        ? { inFlight: this.concurrency.inFlight, queued: this.concurrency.queued }
        : undefined,
    };
  }

  private readonly fanOut: GuardListener = (event) => {
    for (const l of this.listeners) l(event);
  };

  /** `throttle`: the target's, which forgets the outage when this breaker closes again. */
  private makeBreaker(target: string, storeKey: string, throttle?: AdaptiveThrottle): CircuitBreaker {
    const onTransition = (t: BreakerTransition): void => {
      // Closed again after its probes succeeded, the target is healthy: the throttle's refusals
      // from the outage are history and must not go on dropping its calls for a window.
      if (throttle !== undefined && t.to === 'closed') throttle.forget(t.at);
      if (!this.listener) return;
      if (t.to === 'open')
        this.emit({ type: 'trip', at: t.at, target, cause: t.cause as never, openMs: t.openMs ?? 0 });
      else this.emit({ type: 'recover', at: t.at, target, state: t.to });
    };
    return new CircuitBreaker(
      target,
      { ...(this.options.breaker || {}), onTransition },
      this.store,
      storeKey,
      'breaker',
    );
  }
}

function getOrMake<V>(map: Map<string, V>, key: string, make: () => V): V {
  let v = map.get(key);
  if (v === undefined) {
    v = make();
    map.set(key, v);
  }
  return v;
}
