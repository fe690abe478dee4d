import { describe, expect, it } from 'vitest';
import { MetricCatalog } from '../../src/gate/metric-catalog.js';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { ScenarioError } from '../../src/scenario/scenario-error.js';
import { runAll } from './claims.js';

// The deadline-budget header says what a user will see; these hold it to that (seed 1's figures, with margins).

describe('deadline-budget: stage budgets vs one flat timeout', () => {
  const { flat, stages } = runAll('deadline-budget').results;

  it('the flat timeout leaves the tail at the deadline and fails some tasks, with no partial results (no stages: no such field)', () => {
    expect(flat.roots.latencyMs.p99).toBeGreaterThanOrEqual(28_000);
    expect(flat.roots.failed).toBeGreaterThan(0);
    expect(flat.roots.partial).toBeUndefined();
  });

  it('stage budgets cap the tail at the plan budget and return partial results instead of failures', () => {
    expect(stages.roots.latencyMs.max).toBeLessThanOrEqual(12_000);
    expect(stages.roots.failed).toBe(0);
    expect(stages.roots.partial).toBeGreaterThanOrEqual(60);
    expect(stages.roots.partial).toBeLessThan(200);
    const r = stages.roots;
    expect(r.ok + r.late + r.failed + (r.partial ?? 0) + r.unfinished).toBe(r.offered);
  });

  it('the partial share gate metric sees the price of the capped tail', () => {
    const catalog = new MetricCatalog(['task', 'agent', 'llm'], ['primary']);
    const share = catalog.resolve('partial share');
    expect(share.value(stages)).toBeGreaterThan(0.05);
    expect(share.value(flat)).toBe(0);
  });
});

describe('stage fields are validated with path-named errors', () => {
  const base = (extra: string, layer = '') => `
name: s
duration: 1s
arrival: { type: constant, rate: 1 }
tokens: { prompt: 1, completion: 1 }
${extra}
layers:
  - { name: a${layer} }
  - { name: llm }
upstream: { models: [{ name: m, slots: 1, queue: 1, ttft: 1ms, tpot: 1ms }] }
`;
  const problem = (text: string): string => {
    try {
      loadScenario(text);
    } catch (e) {
      expect(e).toBeInstanceOf(ScenarioError);
      return (e as Error).message;
    }
    throw new Error('expected a scenario error');
  };

  it('names each bad field', () => {
    expect(problem(base('stages: { plan: -1s }'))).toMatch(/stages\.plan/);
    expect(problem(base('stages: 5'))).toMatch(/stages: expected a mapping of stage names to budgets/);
    expect(problem(base('stages: {}'))).toMatch(/stages: expected at least one stage/);
    expect(problem(base('stages: { plan: 1s }', ', stage: nope'))).toMatch(
      /layers\[0\]\.stage: unknown stage "nope" \(known: plan\)/,
    );
    expect(problem(base('', ', stage: plan'))).toMatch(/layers\[0\]\.stage: unknown stage "plan"/);
    expect(problem(base('stages: { plan: 1s }', ', stage: plan, partial: maybe'))).toMatch(
      /layers\[0\]\.partial: expected true or false/,
    );
    expect(problem(base('stages: { plan: 1s }', ', partial: true'))).toMatch(
      /layers\[0\]\.partial: only a layer with a stage/,
    );
  });
});
