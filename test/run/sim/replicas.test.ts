import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../../src/run/metrics/result.js';
import { Simulation } from '../../../src/run/sim/simulation.js';
import type { RunSpec } from '../../../src/run/run-spec.js';
import type { EngineState } from '../../../src/traffic/config.js';
import { engine, naive, spec } from './spec.js';

function run(s: RunSpec): RunResult {
  return new Simulation(s).run();
}

/**
 * One layer calling the model at 40 calls/s (one every 25 ms) for 30 s, its engine limited to
 * 10 requests/s (burst 10), on `replicas` replicas with `state`.
 */
function gateway(replicas: number | undefined, state?: EngineState): RunSpec {
  const s = spec({
    layers: 1,
    policy: engine({
      maxAttempts: 1,
      throttle: false,
      breaker: false,
      limits: [{ name: 'rps', unit: 'requests', rate: 10, per: 'second' }],
    }),
    rate: 40,
    engine: state === undefined ? {} : { state },
  });
  if (replicas !== undefined) s.traffic.layers[0].replicas = replicas;
  return s;
}

describe('replicas in the simulator', () => {
  it('one replica, said or not, local or shared, is the run there always was', () => {
    const plain = run(gateway(undefined));
    expect(run(gateway(1))).toEqual(plain);
    expect(run(gateway(1, 'shared'))).toEqual(plain);
    expect(plain.series.engine[0]).not.toHaveProperty('replicas');
    expect(plain.series.engine[0]).not.toHaveProperty('replicasOpen');
  });

  it('local: 4 replicas each admit their 10/s, so all 40/s reach the upstream', () => {
    const r = run(gateway(4, 'local'));
    const calls = r.layers[0].logicalCalls;
    expect(calls).toBe(1200);
    // Round-robin gives each replica exactly every 4th call: 10/s, its limit, never above.
    expect(r.upstream.attempts).toBe(calls);
    expect(r.layers[0].shed.limit ?? 0).toBe(0);
  });

  it('shared: one bucket for the 4 replicas, so the upstream sees 10/s and the rest is shed', () => {
    const r = run(gateway(4, 'shared'));
    // The bucket's 10 at the start, then 10/s for 30 s.
    expect(r.upstream.attempts).toBeGreaterThanOrEqual(300);
    expect(r.upstream.attempts).toBeLessThanOrEqual(311);
    expect(r.layers[0].shed.limit).toBe(1200 - r.upstream.attempts);
    // With no delay in the shared store, 4 replicas limit exactly as one process does.
    expect(r.upstream.attempts).toBe(run(gateway(1)).upstream.attempts);
  });

  it('the series says how many replicas the layer has, and sums their budgets unless shared', () => {
    const floorOnly = (s: RunSpec): RunSpec => {
      s.traffic.engine = { ...s.traffic.engine, retryBudget: { ratio: 0 } };
      return s;
    };
    const local = run(floorOnly(gateway(4, 'local'))).series.engine[0];
    const shared = run(floorOnly(gateway(4, 'shared'))).series.engine[0];
    expect(local.replicas).toBe(4);
    expect(shared.replicas).toBe(4);
    expect(local.replicasOpen?.every((n) => n === 0)).toBe(true);
    // The budget's floor, 1 retry/s over its 10 s window, is each replica's: 4 of them when local.
    expect(new Set(local.budgetBalance.slice(0, 30))).toEqual(new Set([40]));
    expect(new Set(shared.budgetBalance.slice(0, 30))).toEqual(new Set([10]));
  });

  it('counts replicas with a breaker open, and naive layers ignore replicas', () => {
    const outage = [{ kind: 'outage' as const, fromMs: 0, toMs: 1e12, rate: 1, status: 503 }];
    const s = gateway(4, 'local');
    s.upstream.faults = outage;
    s.traffic.layers[0].retry = engine({ maxAttempts: 1, throttle: false, breaker: { minimumCalls: 5 } });
    const e = run(s).series.engine[0];
    expect(Math.max(...e.replicasOpen!)).toBe(4);
    expect(e.breakerOpen.some((b) => b === 1)).toBe(true);
    const plain = spec({ layers: 2, policy: naive(3), faults: outage });
    const replicated = spec({ layers: 2, policy: naive(3), faults: outage });
    replicated.traffic.layers[0].replicas = 3;
    expect(run(replicated)).toEqual(run(plain));
  });
});
