import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Simulation } from '../../src/run/sim/simulation.js';
import { loadScenario } from '../../src/scenario/load-scenario.js';

interface Case {
  plan: number;
  model: number;
  agentPolicy: string;
  llmPolicy: string;
  llmTimeout: number;
  errorRate: number;
  factor: number;
  partial: boolean;
}

function scenarioText(c: Case): string {
  return `
name: stages
duration: 3s
drain: 120s
arrival: { type: poisson, rate: 20 }
deadline: 30s
tokens: { prompt: 100, completion: { dist: lognormal, median: 100, p99: 400 } }
stages: { plan: ${c.plan}ms, model: ${c.model}ms }
layers:
  - { name: task, retry: { policy: naive, attempts: 2 } }
  - { name: agent, fanout: 3, stage: plan, partial: ${c.partial}, retry: ${c.agentPolicy} }
  - { name: llm, stage: model, timeout: ${c.llmTimeout}ms, retry: ${c.llmPolicy} }
upstream:
  models: [{ name: m, slots: 16, queue: 64, ttft: { dist: lognormal, median: 200ms, p99: 2s }, tpot: 5ms }]
  faults:
    - { kind: errors, rate: ${c.errorRate}, status: { 503: 1 } }
    - { kind: latency, factor: ${c.factor} }
variants: { only: {} }
`;
}

/** Runs the case; returns each staged call's duration over its budget (ms, ≤ 0 when within) and the result. */
function run(c: Case) {
  const s = loadScenario(scenarioText(c), { variant: 'only' });
  const sim = new Simulation({ ...s, name: 'only', seed: 7 });
  const budgets = [Infinity, c.plan, c.model];
  let worst = -Infinity;
  let staged = 0;
  const callDone = sim.metrics.callDone.bind(sim.metrics);
  sim.metrics.callDone = (layer, start, t, ok) => {
    if (budgets[layer] !== Infinity) {
      staged++;
      worst = Math.max(worst, t - start - budgets[layer]);
    }
    callDone(layer, start, t, ok);
  };
  const result = sim.run();
  return { worst, staged, result };
}

const policy = fc.constantFrom(
  '{ policy: none }',
  '{ policy: naive, attempts: 3 }',
  '{ policy: naive, attempts: 5, backoff: { baseMs: 800 } }',
  '{ policy: engine }',
);

describe('stage budgets', () => {
  it('are never overspent: every call at a staged layer ends within its budget, retries and waits included', () => {
    fc.assert(
      fc.property(
        fc.record({
          plan: fc.integer({ min: 200, max: 8000 }),
          model: fc.integer({ min: 100, max: 4000 }),
          agentPolicy: policy,
          llmPolicy: policy,
          llmTimeout: fc.integer({ min: 50, max: 10_000 }),
          errorRate: fc.constantFrom(0, 0.3, 0.8),
          factor: fc.constantFrom(1, 4),
          partial: fc.boolean(),
        }),
        (c) => {
          const { worst, staged, result } = run(c);
          expect(staged).toBeGreaterThan(0);
          expect(worst).toBeLessThanOrEqual(1e-6);
          const r = result.roots;
          expect(r.ok + r.late + r.failed + (r.partial ?? 0) + r.unfinished).toBe(r.offered);
          if (!c.partial) expect(r.partial).toBe(0);
        },
      ),
      { seed: 12, numRuns: 25 },
    );
  });

  const tight: Case = {
    plan: 1500,
    model: 1000,
    agentPolicy: '{ policy: naive, attempts: 3 }',
    llmPolicy: '{ policy: naive, attempts: 3 }',
    llmTimeout: 5000,
    errorRate: 0.3,
    factor: 4,
    partial: true,
  };

  it('a layer out of budget with partial: true returns what it has: roots.partial, counted apart from ok and failed', () => {
    const { result } = run(tight);
    const r = result.roots;
    expect(r.partial).toBeGreaterThan(0);
    expect(r.ok + r.late + r.failed + (r.partial ?? 0)).toBe(r.offered);
    expect(r.latencyMs.max).toBeLessThanOrEqual(2 * 1500);
  });

  it('with partial: false the same budget fails the step instead', () => {
    const withPartial = run(tight).result.roots;
    const without = run({ ...tight, partial: false }).result.roots;
    expect(without.partial).toBe(0);
    expect(without.failed).toBeGreaterThan(withPartial.failed);
  });

  it('is deterministic per seed', () => {
    expect(JSON.stringify(run(tight).result.roots)).toBe(JSON.stringify(run(tight).result.roots));
  });
});
