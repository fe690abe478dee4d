import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/engine/manual-clock.js';
import { SeededRandom } from '../../src/engine/random.js';
import type { EngineConfig } from '../../src/traffic/config.js';
import { engineGuard } from '../../src/traffic/engine-guard.js';
import { EngineReplicas } from '../../src/traffic/engine-replicas.js';

const BASE: EngineConfig = {
  maxAttempts: 3,
  backoff: {},
  retryBudget: { ratio: 0.1, minRetriesPerSec: 0 },
  throttle: {},
  breaker: {},
  limits: [{ name: 'rps', unit: 'requests', rate: 2, per: 'second' }],
  concurrency: false,
  minAttemptMs: 0,
};

function replicas(count: number, over: Partial<EngineConfig> = {}, base: EngineConfig = BASE): EngineReplicas {
  return new EngineReplicas(
    base,
    over,
    count,
    'gateway',
    ['model'],
    new ManualClock(0),
    new SeededRandom(7).split('layer:gateway'),
  );
}

describe('EngineReplicas', () => {
  it('hands calls out round-robin over its replicas', () => {
    const r = replicas(3);
    const picked = Array.from({ length: 8 }, () => r.guards.indexOf(r.pick()));
    expect(picked).toEqual([0, 1, 2, 0, 1, 2, 0, 1]);
  });

  it('one replica is always the same engine, drawing the stream a layer always had', () => {
    const r = replicas(1);
    expect(r.guards).toHaveLength(1);
    expect(new Set(Array.from({ length: 5 }, () => r.pick())).size).toBe(1);
    // Replica 0 uses the layer's stream: its backoff draws are those of the engine built alone.
    const alone = engineGuard(
      BASE,
      {},
      'gateway',
      ['model'],
      new ManualClock(0),
      new SeededRandom(7).split('layer:gateway'),
    );
    const draws = (g: typeof alone) => [1, 2, 3].map((n) => g.backoff.delayMs(n));
    expect(draws(r.guards[0])).toEqual(draws(alone));
    // Other replicas draw from streams of their own.
    expect(draws(replicas(2).guards[1])).not.toEqual(draws(alone));
  });

  it('local state: every replica its own store, budget and buckets', () => {
    const r = replicas(2);
    expect(r.state).toBe('local');
    expect(r.guards[0].store).not.toBe(r.guards[1].store);
    r.guards[0].budget!.recordFirst(0);
    expect(r.guards[0].budget!.snapshot(0).firsts).toBe(1);
    expect(r.guards[1].budget!.snapshot(0).firsts).toBe(0);
    // Each limiter admits its own 2 requests/s: 4 in all.
    const admitted = r.guards.map((g) => [1, 2, 3].filter(() => g.limiter!.reserve({ tokens: 0 }, 0).ok).length);
    expect(admitted).toEqual([2, 2]);
  });

  it('shared state: one store, so the replicas see each other at once; breakers keep their own state', () => {
    const r = replicas(2, { state: 'shared' });
    expect(r.state).toBe('shared');
    expect(r.guards[0].store).toBe(r.guards[1].store);
    r.guards[0].budget!.recordFirst(0);
    expect(r.guards[1].budget!.snapshot(0).firsts).toBe(1);
    // One bucket of 2 requests/s for both.
    const admitted = r.guards.map((g) => [1, 2, 3].filter(() => g.limiter!.reserve({ tokens: 0 }, 0).ok).length);
    expect(admitted).toEqual([2, 0]);
    expect(r.guards[0].breakers![0]).not.toBe(r.guards[1].breakers![0]);
  });

  it("a layer's engine.state overrides the scenario's; local is the default", () => {
    expect(replicas(2, {}, { ...BASE, state: 'shared' }).state).toBe('shared');
    expect(replicas(2, { state: 'local' }, { ...BASE, state: 'shared' }).state).toBe('local');
    expect(replicas(2, {}, BASE).state).toBe('local');
  });
});
