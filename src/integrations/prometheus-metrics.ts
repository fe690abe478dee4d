import { Counter, Gauge, register as globalRegistry, type Registry } from 'prom-client';
import type { GuardView } from '../engine/guard.js';
import type { GuardEvent } from '../engine/guard-events.js';

export interface GuardMetricsOptions {
  /** Where the metrics are registered. @default prom-client's global `register` */
  registry?: Registry;
  /** Start of every metric name. @default 'stormlab_' */
  prefix?: string;
}

/** A store that reports whether its shared state is reachable (`RedisStore`). */
export interface ObservableStore {
  readonly prefix: string;
  readonly available: boolean;
  subscribe(listener: (event: { type: 'store_unavailable' | 'store_recovered' }) => void): () => void;
}

const BREAKER_STATES = ['closed', 'open', 'half_open'] as const;

/** The metrics of one registry and prefix, shared by every guard registered there. */
class MetricSet {
  readonly guards = new Set<GuardView>();
  readonly stores = new Set<ObservableStore>();
  readonly attempts: Counter<'guard' | 'target' | 'retry'>;
  readonly retries: Counter<'guard' | 'target' | 'class'>;
  readonly shed: Counter<'guard' | 'target' | 'reason'>;
  readonly fallbacks: Counter<'guard' | 'from' | 'to' | 'why'>;
  readonly trips: Counter<'guard' | 'target' | 'cause'>;
  readonly resumes: Counter<'guard' | 'target' | 'class'>;
  readonly reserved: Counter<'guard' | 'target'>;
  readonly used: Counter<'guard' | 'target'>;
  readonly storeOutages: Counter<'store'>;

  constructor(registry: Registry, p: string) {
    const registers = [registry];
    const counter = <L extends string>(name: string, help: string, labelNames: L[]): Counter<L> =>
      new Counter({ name: p + name, help, labelNames, registers });
    this.attempts = counter(
      'attempts_total',
      'Attempts sent to the upstream; retry="true" for retries on the same target.',
      ['guard', 'target', 'retry'],
    );
    this.retries = counter('retries_total', 'Retries planned after a failed attempt, by error class.', [
      'guard',
      'target',
      'class',
    ]);
    this.shed = counter('shed_total', 'Calls refused locally before reaching the upstream, by reason.', [
      'guard',
      'target',
      'reason',
    ]);
    this.fallbacks = counter('fallbacks_total', 'Calls moved to the next target of the fallback chain.', [
      'guard',
      'from',
      'to',
      'why',
    ]);
    this.trips = counter('breaker_trips_total', 'Circuit breaker trips, by cause.', ['guard', 'target', 'cause']);
    this.resumes = counter(
      'stream_resumes_total',
      'Committed streams that broke (a cut or a stall) and whose rest was asked for (stream.resume), by the target that broke.',
      ['guard', 'target', 'class'],
    );
    this.reserved = counter(
      'tokens_reserved_total',
      'Tokens reserved from the limiter before attempts (estimates; a reservation released when a later check refuses the call counts too).',
      ['guard', 'target'],
    );
    this.used = counter('tokens_used_total', 'Tokens the upstream reported for settled reservations.', [
      'guard',
      'target',
    ]);
    this.storeOutages = counter(
      'store_unavailable_total',
      'Times the shared store became unreachable (the engine then decides on local state).',
      ['store'],
    );
    // Gauges read the guards' state when scraped: nothing is kept up to date on the hot path.
    const gauge = (name: string, help: string, labelNames: string[], read: (g: Gauge) => void): Gauge =>
      new Gauge({
        name: p + name,
        help,
        labelNames,
        registers,
        collect() {
          this.reset();
          read(this);
        },
      });
    const each = (fn: (g: GuardView, s: ReturnType<GuardView['snapshot']>, name: string) => void): void => {
      for (const g of this.guards) fn(g, g.snapshot(g.clock.now()), g.name);
    };
    gauge(
      'breaker_state',
      'Circuit breaker state: 1 for the current state, 0 for the others.',
      ['guard', 'target', 'state'],
      (m) =>
        each((_, s, guard) => {
          for (const t of s.targets)
            if (t.breaker)
              for (const state of BREAKER_STATES)
                m.set({ guard, target: t.name, state }, t.breaker.state === state ? 1 : 0);
        }),
    );
    gauge(
      'throttle_drop_probability',
      'Adaptive throttle: the probability the next request is dropped.',
      ['guard', 'target'],
      (m) =>
        each((_, s, guard) => {
          for (const t of s.targets) if (t.throttle) m.set({ guard, target: t.name }, t.throttle.dropProbability);
        }),
    );
    gauge('retry_budget_balance', 'Retry budget: retries the window still allows.', ['guard'], (m) =>
      each((_, s, guard) => {
        if (s.budget) m.set({ guard }, s.budget.balance);
      }),
    );
    gauge('limit_available', 'Limiter: tokens available in each bucket.', ['guard', 'dimension', 'key'], (m) =>
      each((_, s, guard) => {
        for (const l of s.limits) m.set({ guard, dimension: l.dimension, key: l.key ?? '' }, l.available);
      }),
    );
    gauge('in_flight', 'Concurrency limiter: calls in flight.', ['guard'], (m) =>
      each((_, s, guard) => {
        if (s.concurrency) m.set({ guard }, s.concurrency.inFlight);
      }),
    );
    gauge('queued', 'Concurrency limiter: calls waiting for a slot.', ['guard'], (m) =>
      each((_, s, guard) => {
        if (s.concurrency) m.set({ guard }, s.concurrency.queued);
      }),
    );
    gauge(
      'store_available',
      'Shared store: 1 while it answers, 0 while the engine runs on local state.',
      ['store'],
      (m) => {
        for (const s of this.stores) m.set({ store: s.prefix }, s.available ? 1 : 0);
      },
    );
  }
}

const sets = new WeakMap<Registry, Map<string, MetricSet>>();

function metricSet(registry: Registry, prefix: string): MetricSet {
  let byPrefix = sets.get(registry);
  if (byPrefix === undefined) sets.set(registry, (byPrefix = new Map()));
  let set = byPrefix.get(prefix);
  if (set === undefined) byPrefix.set(prefix, (set = new MetricSet(registry, prefix)));
  return set;
}

/**
 * Exposes a guard's events and state as Prometheus metrics (prom-client): counters for
 * attempts, retries, sheds, fallbacks, trips and tokens, and gauges read at scrape time for
 * breaker states, throttle drop probabilities, the retry budget, limiter buckets and the
 * concurrency limiter. Every metric is labelled with the guard's `name`, so many guards share
 * one set of metrics. Returns a function that stops counting and drops the guard's gauges.
 */
export function guardMetrics(guard: GuardView, options: GuardMetricsOptions = {}): () => void {
  const set = metricSet(options.registry ?? globalRegistry, options.prefix ?? 'stormlab_');
  const name = guard.name;
  set.guards.add(guard);
  // Labelled children are looked up once per label set, not per event.
  const children = new Map<string, { inc(n?: number): void }>();
  const child = (key: string, make: () => { inc(n?: number): void }): { inc(n?: number): void } => {
    let c = children.get(key);
    if (c === undefined) children.set(key, (c = make()));
    return c;
  };
  const unsubscribe = guard.subscribe((e: GuardEvent) => {
    switch (e.type) {
      case 'attempt': {
        const retry = e.attempt > 1 ? 'true' : 'false';
        return child(`a|${e.target}|${retry}`, () => set.attempts.labels(name, e.target, retry)).inc();
      }
      case 'retry':
        return child(`r|${e.target}|${e.class}`, () => set.retries.labels(name, e.target, e.class)).inc();
      case 'shed':
        return child(`s|${e.target}|${e.reason}`, () => set.shed.labels(name, e.target, e.reason)).inc();
      case 'fallback':
        return child(`f|${e.from}|${e.to}|${e.why}`, () => set.fallbacks.labels(name, e.from, e.to, e.why)).inc();
      case 'trip':
        return child(`t|${e.target}|${e.cause}`, () => set.trips.labels(name, e.target, e.cause)).inc();
      case 'resume':
        return child(`rm|${e.target}|${e.class}`, () => set.resumes.labels(name, e.target, e.class)).inc();
      case 'reserve':
        return child(`rs|${e.target}`, () => set.reserved.labels(name, e.target)).inc(e.tokens);
      case 'reconcile':
        return child(`u|${e.target}`, () => set.used.labels(name, e.target)).inc(e.actual);
      default:
        return undefined;
    }
  });
  return () => {
    unsubscribe();
    set.guards.delete(guard);
  };
}

/**
 * Exposes a shared store's link as metrics: `store_available` (1/0, read at scrape time) and
 * `store_unavailable_total`. Returns a function that stops.
 */
export function storeMetrics(store: ObservableStore, options: GuardMetricsOptions = {}): () => void {
  const set = metricSet(options.registry ?? globalRegistry, options.prefix ?? 'stormlab_');
  set.stores.add(store);
  const outages = set.storeOutages.labels(store.prefix);
  const unsubscribe = store.subscribe((e) => {
    if (e.type === 'store_unavailable') outages.inc();
  });
  return () => {
    unsubscribe();
    set.stores.delete(store);
  };
}
