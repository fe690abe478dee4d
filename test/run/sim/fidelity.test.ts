import { describe, expect, it } from 'vitest';
import { Simulation } from '../../../src/run/sim/simulation.js';
import type { RunSpec } from '../../../src/run/run-spec.js';
import type { RunResult } from '../../../src/run/metrics/result.js';
import type { Dist } from '../../../src/upstream/distribution.js';
import { OUTAGE, engine, naive, none, spec } from './spec.js';

function run(s: RunSpec): RunResult {
  return new Simulation(s).run();
}

describe('simulation fidelity', () => {
  it.each([
    [3, 3, 2, 27],
    [2, 4, 2, 16],
    [3, 2, 3, 9],
    [3, 3, { dist: 'choice', values: [1, 2, 4], weights: [1, 1, 1] }, 27],
  ] as Array<[number, number, Dist, number]>)(
    'full outage, naive %i attempts × %i layers (fan-out %j) ⇒ amplification %i',
    (a, L, fanout, expected) => {
      const r = run(spec({ layers: L, policy: naive(a), fanout, faults: OUTAGE }));
      expect(r.amplification).toBe(expected);
      expect(r.successRate).toBe(0);
      const leaf = r.layers[L - 1];
      expect(r.upstream.attempts).toBe(leaf.logicalCalls * expected);
    },
  );

  it('engine at full outage: ≤ 1 + ratio per retrying layer, and the throttle cuts upstream attempts further', () => {
    const budgetOnly = run(
      spec({
        layers: 3,
        policy: engine(),
        faults: OUTAGE,
        engine: { throttle: false, breaker: false, retryBudget: { ratio: 0.1, minRetriesPerSec: 0 } },
      }),
    );
    expect(budgetOnly.amplification).toBeLessThanOrEqual(1.1 ** 3);
    expect(budgetOnly.amplification).toBeGreaterThanOrEqual(1);
    const withThrottle = run(
      spec({
        layers: 3,
        policy: engine(),
        faults: OUTAGE,
        engine: { breaker: false, retryBudget: { ratio: 0.1, minRetriesPerSec: 0 } },
      }),
    );
    expect(withThrottle.amplification).toBeLessThan(budgetOnly.amplification / 2);
    const full = run(spec({ layers: 3, policy: engine(), faults: OUTAGE }));
    expect(full.amplification).toBeLessThan(withThrottle.amplification);
    expect(full.layers.some((l) => (l.shed.breaker ?? 0) > 0)).toBe(true);
  });

  it('at 0 % failure the engine changes nothing: amplification 1.0 and the same goodput', () => {
    const plain = run(spec({ layers: 3, policy: naive(3) }));
    const guarded = run(spec({ layers: 3, policy: engine() }));
    expect(plain.amplification).toBe(1);
    expect(guarded.amplification).toBe(1);
    expect(guarded.goodput).toBe(plain.goodput);
    expect(guarded.successRate).toBe(1);
    expect(guarded.layers.every((l) => Object.keys(l.shed).length === 0)).toBe(true);
  });

  it.each([0.1, 0.3, 0.5, 0.8, 1])(
    'one retrying layer with the budget keeps upstream load ≤ (1 + ratio) × offered at failure rate %f',
    (rate) => {
      const faults = [{ kind: 'errors' as const, fromMs: 0, toMs: 1e12, rate, status: { 503: 1 } }];
      const r = run(
        spec({
          layers: 2,
          policy: (l) =>
            l === 1
              ? engine({
                  maxAttempts: 10,
                  throttle: false,
                  breaker: false,
                  retryBudget: { ratio: 0.1, minRetriesPerSec: 0 },
                })
              : none,
          faults,
          rate: 50,
        }),
      );
      expect(r.upstream.attempts).toBeLessThanOrEqual(1.1 * r.layers[1].logicalCalls + 1);
      if (rate >= 0.3) expect(r.upstream.attempts).toBeGreaterThan(1.05 * r.layers[1].logicalCalls); // the budget is really used
    },
  );

  it('counts work done for callers that gave up as wasted, unless the upstream cancels on disconnect', () => {
    const slow = (cancelOnDisconnect: boolean): RunSpec => {
      const s = spec({ layers: 2, policy: naive(2) });
      s.traffic.layers[1].timeoutMs = 50; // every leaf attempt gives up before its 100 ms of service
      s.upstream = { ...s.upstream, cancelOnDisconnect, models: [{ ...s.upstream.models[0], ttftMs: 100 }] };
      return s;
    };
    const kept = run(slow(false));
    const cancelled = run(slow(true));
    expect(kept.upstream.status.timeout).toBe(kept.upstream.attempts);
    expect(kept.upstream.wastedTokens).toBeGreaterThan(0);
    expect(cancelled.upstream.wastedTokens).toBe(0);
  });

  it('ends a closed loop with no think time whose tasks are refused at once', () => {
    const s = spec({ layers: 1, policy: engine(), faults: OUTAGE, durationMs: 5_000 });
    s.traffic.arrival = { type: 'closed', users: 10, thinkMs: 0 };
    const r = run(s);
    expect(r.roots.offered).toBeGreaterThan(100);
    expect(r.roots.offered).toBeLessThanOrEqual(10 * 5_000); // a task per user per millisecond at most
    expect(r.upstream.attempts).toBeLessThan(r.roots.offered);
  });

  it('is deterministic, and stopping at a virtual time then going on changes nothing', () => {
    const s = spec({
      layers: 3,
      policy: engine(),
      faults: [{ kind: 'errors', fromMs: 5000, toMs: 15_000, rate: 0.5, status: { 503: 0.5, 429: 0.5 } }],
    });
    const a = JSON.stringify(run(s));
    const b = JSON.stringify(run(s));
    expect(b).toBe(a);
    const stepped = new Simulation(s);
    for (let t = 0; !stepped.done; t += 777) stepped.advanceTo(t);
    const c = JSON.stringify(stepped.result());
    expect(c).toBe(a);
    const other = JSON.stringify(run({ ...s, seed: 2 }));
    expect(other).not.toBe(a);
  });
});
