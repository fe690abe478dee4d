import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/engine/manual-clock.js';
import { SeededRandom } from '../../src/engine/random.js';
import { engineSample } from '../../src/run/engine-sample.js';
import { replicaSnapshot } from '../../src/run/replica-snapshot.js';
import type { EngineConfig, EngineState } from '../../src/traffic/config.js';
import { EngineReplicas } from '../../src/traffic/engine-replicas.js';

const BASE: EngineConfig = {
  maxAttempts: 3,
  backoff: {},
  retryBudget: { ratio: 0.5, minRetriesPerSec: 0 },
  throttle: { k: 2 },
  breaker: { minimumCalls: 2, failureRatio: 0.5, openMs: 5_000 },
  limits: [{ name: 'rpm', unit: 'requests', rate: 60, per: 'minute', burst: 10 }],
  concurrency: false,
  minAttemptMs: 0,
};

/** 4 replicas; each of the first `firsts` replicas makes one call, and replica 1 fails twice (its breaker opens). */
function busy(state: EngineState): EngineReplicas {
  const r = new EngineReplicas(
    { ...BASE, state },
    {},
    4,
    'gateway',
    ['model'],
    new ManualClock(0),
    new SeededRandom(1),
  );
  r.guards.forEach((g, i) => {
    g.budget!.recordFirst(0);
    g.limiter!.reserve({ tokens: 0 }, 0);
    if (g.throttles![0].tryAcquire(0)) g.throttles![0].record(i !== 1, 0);
  });
  const b = r.guards[1].breakers![0];
  for (let i = 0; i < 2; i++) b.record(b.tryAcquire(0), 'failure', 10, 0);
  return r;
}

describe('replicaSnapshot: the dashboard reads a replicated layer as one engine', () => {
  it('one replica: its own snapshot, nothing added', () => {
    const r = new EngineReplicas(BASE, {}, 1, 'gateway', ['model'], new ManualClock(0), new SeededRandom(1));
    expect(replicaSnapshot(r, 0)).toEqual({ guard: r.guards[0].snapshot(0) });
    expect(engineSample(r, 0)).toEqual({ dropProbability: 0, budgetBalance: 0, breakerOpen: false });
  });

  it('local: counts add up over the replicas, the breaker shows the worst state and how many are in it', () => {
    const { guard, replicas } = replicaSnapshot(busy('local'), 500);
    expect(replicas).toEqual({ count: 4, state: 'local', breakers: [1] });
    expect(guard.budget).toEqual({ firsts: 4, retries: 0, balance: 2 });
    expect(guard.targets[0].throttle).toMatchObject({ requests: 4, accepts: 3 });
    expect(guard.targets[0].breaker).toMatchObject({
      state: 'open',
      since: 0,
      trips: 1,
      openUntil: 5_000,
      calls: 2,
      failures: 2,
    });
    // Four buckets of 10, one request taken from each, half a second of refill (1/s).
    expect(guard.limits).toEqual([{ dimension: 'rpm', key: undefined, available: 4 * 9.5, capacity: 40, debt: 0 }]);
  });

  it('shared: the one window and bucket are read once; in flight is still each replica’s', () => {
    const r = busy('shared');
    r.guards[2].throttles![0].tryAcquire(0); // in flight, unanswered
    const { guard, replicas } = replicaSnapshot(r, 500);
    expect(replicas).toEqual({ count: 4, state: 'shared', breakers: [1] });
    expect(guard.budget).toEqual({ firsts: 4, retries: 0, balance: 2 });
    expect(guard.targets[0].throttle).toMatchObject({ requests: 5, accepts: 3 });
    expect(guard.targets[0].breaker).toMatchObject({ state: 'open', calls: 2, failures: 2 });
    // One bucket of 10, four requests taken, half a second of refill.
    expect(guard.limits).toEqual([{ dimension: 'rpm', key: undefined, available: 6.5, capacity: 10, debt: 0 }]);
  });

  it('closed everywhere: the breaker shows closed, with every replica in it', () => {
    const r = new EngineReplicas(BASE, {}, 3, 'gateway', ['model'], new ManualClock(0), new SeededRandom(1));
    const { guard, replicas } = replicaSnapshot(r, 0);
    expect(guard.targets[0].breaker?.state).toBe('closed');
    expect(replicas?.breakers).toEqual([3]);
  });

  it('engineSample: mean drop probability, budgets summed unless shared, replicas with a breaker open', () => {
    expect(engineSample(busy('local'), 1_000)).toEqual({
      dropProbability: expect.any(Number),
      budgetBalance: 2,
      breakerOpen: true,
      replicas: 4,
      replicasOpen: 1,
    });
    expect(engineSample(busy('shared'), 1_000)).toMatchObject({
      budgetBalance: 2,
      breakerOpen: true,
      replicas: 4,
      replicasOpen: 1,
    });
    const r = busy('local');
    const mean = r.guards.reduce((p, g) => p + g.throttles![0].dropProbability(1_000), 0) / 4;
    expect(engineSample(r, 1_000).dropProbability).toBe(mean);
  });
});
