import type { BreakerSnapshot } from '../engine/circuit-breaker.js';
import type { GuardSnapshot } from '../engine/guard-core.js';
import type { EngineReplicas } from '../traffic/engine-replicas.js';

/** What a dashboard shows of a layer's engine: one snapshot, and for several replicas, how they add up. */
export interface LayerEngineSnapshot {
  guard: GuardSnapshot;
  /** Absent for one replica. */
  replicas?: {
    count: number;
    state: 'local' | 'shared';
    /** Per target: how many replicas' breakers are in the state `guard` shows (the worst). */
    breakers: number[];
  };
}

const SEVERITY: Record<BreakerSnapshot['state'], number> = { closed: 0, half_open: 1, open: 2 };

/**
 * The engine state of a layer's replicas as one `GuardSnapshot`, so the dashboard reads a
 * replicated layer like any other:
 *
 * - counts add up: retry-budget firsts, retries and balance, throttle requests and accepts,
 *   breaker window counts and probes in flight, bucket levels and capacities — over every
 *   replica with `local` state; with `shared` state the windows and buckets are one, read once,
 *   and only what each replica keeps for itself (requests in flight) is summed;
 * - the drop probability is the mean: what the next call is dropped with, wherever it lands;
 * - a breaker shows the worst state any replica's is in (open, then half-open, then closed),
 *   since the earliest of those replicas entered it, with the most consecutive trips among
 *   them, and `replicas.breakers` says how many replicas are in it.
 *
 * One replica gives its own snapshot, unchanged.
 */
export function replicaSnapshot(engines: EngineReplicas, now: number): LayerEngineSnapshot {
  const guards = engines.guards;
  if (guards.length === 1) return { guard: guards[0].snapshot(now) };
  const shared = engines.state === 'shared';
  const snaps = guards.map((g) => g.snapshot(now));
  const first = snaps[0];
  const sum = (f: (s: GuardSnapshot) => number | undefined): number =>
    shared ? (f(first) ?? 0) : snaps.reduce((n, s) => n + (f(s) ?? 0), 0);
  const breakers: number[] = [];
  const targets = first.targets.map((t, i): GuardSnapshot['targets'][number] => {
    const out: GuardSnapshot['targets'][number] = { name: t.name };
    if (t.throttle) {
      const own = guards.map((g) => g.throttles![i].snapshot(now));
      const inFlight = own.reduce((n, s) => n + s.inFlight, 0);
      out.throttle = {
        // Answered requests are in the window (one, when shared); in flight is each replica's.
        requests: shared ? own[0].requests - own[0].inFlight + inFlight : own.reduce((n, s) => n + s.requests, 0),
        accepts: sum((s) => s.targets[i].throttle!.accepts),
        dropProbability: own.reduce((p, s) => p + s.dropProbability, 0) / own.length,
      };
    }
    if (t.breaker) {
      const all = snaps.map((s) => s.targets[i].breaker!);
      const worst = Math.max(...all.map((b) => SEVERITY[b.state]));
      const inWorst = all.filter((b) => SEVERITY[b.state] === worst);
      breakers.push(inWorst.length);
      out.breaker = {
        key: t.breaker.key,
        state: inWorst[0].state,
        since: Math.min(...inWorst.map((b) => b.since)),
        trips: Math.max(...inWorst.map((b) => b.trips)),
        openUntil: Math.max(...inWorst.map((b) => b.openUntil)),
        calls: sum((s) => s.targets[i].breaker!.calls),
        failures: sum((s) => s.targets[i].breaker!.failures),
        slow: sum((s) => s.targets[i].breaker!.slow),
        throttled: sum((s) => s.targets[i].breaker!.throttled),
        probesInFlight: all.reduce((n, b) => n + b.probesInFlight, 0),
      };
    } else breakers.push(0);
    return out;
  });
  const guard: GuardSnapshot = {
    at: first.at,
    targets,
    limits: mergeLimits(
      snaps.map((s) => s.limits),
      shared,
    ),
  };
  if (first.budget)
    guard.budget = {
      firsts: sum((s) => s.budget?.firsts),
      retries: sum((s) => s.budget?.retries),
      balance: sum((s) => s.budget?.balance),
    };
  if (first.concurrency)
    guard.concurrency = {
      inFlight: snaps.reduce((n, s) => n + (s.concurrency?.inFlight ?? 0), 0),
      queued: snaps.reduce((n, s) => n + (s.concurrency?.queued ?? 0), 0),
    };
  return { guard, replicas: { count: guards.length, state: engines.state, breakers } };
}

/**
 * Buckets by dimension and key, in the order first seen (a keyed dimension's buckets appear as
 * replicas use them): summed with local state, read once with shared state.
 */
function mergeLimits(lists: Array<GuardSnapshot['limits']>, shared: boolean): GuardSnapshot['limits'] {
  const merged = new Map<string, GuardSnapshot['limits'][number]>();
  for (const list of lists) {
    for (const l of list) {
      const id = JSON.stringify([l.dimension, l.key ?? null]);
      const seen = merged.get(id);
      if (seen === undefined) merged.set(id, { ...l });
      else if (!shared) {
        seen.available += l.available;
        seen.capacity += l.capacity;
        seen.debt += l.debt;
      }
    }
  }
  return [...merged.values()];
}
