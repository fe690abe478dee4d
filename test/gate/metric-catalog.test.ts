import { beforeAll, describe, expect, it } from 'vitest';
import { SHED_REASONS } from '../../src/engine/errors.js';
import { MetricCatalog } from '../../src/gate/metric-catalog.js';
import { GateError } from '../../src/gate/gate-error.js';
import type { RunResult } from '../../src/run/metrics/result.js';
import { fakeRun } from '../report/fixture.js';

/** Every number of a run's JSON by its path; named arrays (layers, models) by name; no series. */
function leaves(value: unknown, path: string, out: Map<string, number>): Map<string, number> {
  if (typeof value === 'number') out.set(path, value);
  else if (Array.isArray(value))
    for (const item of value) leaves(item, `${path}.${(item as { name: string }).name}`, out);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) if (k !== 'series') leaves(v, path === '' ? k : `${path}.${k}`, out);
  }
  return out;
}

describe('MetricCatalog', () => {
  let run: RunResult;
  const catalog = new MetricCatalog(['orchestrator', 'agent', 'llm'], ['primary']);
  beforeAll(async () => {
    run = fakeRun('engine', { roots: 200, leafAttempts: 3, okShare: 0.8, shed: true });
    run = { ...run, live: { poolConnections: 256, maxPending: 12, meanPending: 1.5, requestErrors: 2 } };
  });

  it('names every number of the result JSON by its path, and gives that number', () => {
    const all = leaves(JSON.parse(JSON.stringify(run)), '', new Map());
    expect(all.size).toBeGreaterThan(60);
    for (const [path, value] of all) expect([path, catalog.resolve(path).value(run)]).toEqual([path, value]);
  });

  it('takes the short forms people write', () => {
    const same = (short: string, long: string): void =>
      expect([short, catalog.resolve(short).value(run)]).toEqual([short, catalog.resolve(long).value(run)]);
    same('recovery', 'recoveryMs');
    same('p99', 'roots.latencyMs.p99');
    same('latency.p95', 'roots.latencyMs.p95');
    same('layers.llm.p99', 'layers.llm.latencyMs.p99');
    same('wastedTokens', 'upstream.wastedTokens');
    same('upstreamAttempts', 'upstream.attempts');
    expect(catalog.resolve('layers.llm.p99').name).toBe('layers.llm.latencyMs.p99');
  });

  it('sums shed over layers and reasons, and gives shares of what each layer tried', () => {
    const byReason = (r: string): number => run.layers.reduce((a, l) => a + (l.shed[r as keyof typeof l.shed] ?? 0), 0);
    expect(byReason('budget')).toBeGreaterThan(0);
    expect(catalog.resolve('shed.budget').value(run)).toBe(byReason('budget'));
    expect(catalog.resolve('shed').value(run)).toBe(SHED_REASONS.reduce((a, r) => a + byReason(r), 0));
    const agent = run.layers[2];
    const tried = agent.attempts + (agent.shed.budget ?? 0) + (agent.shed.throttle ?? 0);
    expect(catalog.resolve('layers.llm.shed.budget share').value(run)).toBeCloseTo(
      (agent.shed.budget ?? 0) / tried,
      12,
    );
    expect(catalog.resolve('  shed.budget   share ').name).toBe('shed.budget share');
    expect(catalog.resolve('shed.deadline').value(run)).toBe(0);
  });

  it('counts any upstream status, 0 when it never came', () => {
    expect(catalog.resolve('upstream.status.418').value(run)).toBe(0);
    expect(catalog.resolve('upstream.models.primary.status.429').value(run)).toBe(run.upstream.status['429']);
  });

  it('gives null for what a run lacks: no recovery, a live figure of a simulated run, a missing layer', () => {
    expect(catalog.resolve('recovery').value({ ...run, recoveryMs: null })).toBeNull();
    expect(catalog.resolve('live.maxPending').value({ ...run, live: undefined })).toBeNull();
    expect(catalog.resolve('layers.llm.p99').value({ ...run, layers: [] })).toBeNull();
  });

  it('knows which way is better', () => {
    expect(catalog.resolve('goodput').higherIsBetter).toBe(true);
    expect(catalog.resolve('successRate').higherIsBetter).toBe(true);
    expect(catalog.resolve('amplification').higherIsBetter).toBe(false);
    expect(catalog.resolve('layers.agent.p99').higherIsBetter).toBe(false);
  });

  it.each([
    ['amplificaton', 'unknown metric "amplificaton" (did you mean amplification?)'],
    ['layers.lm.p99', 'unknown layer "lm" in "layers.lm.p99" (did you mean llm?); layers: orchestrator, agent, llm'],
    [
      'upstream.models.primry.attempts',
      'unknown model "primry" in "upstream.models.primry.attempts" (did you mean primary?); models: primary',
    ],
    ['layers.llm.latncyMs.p99', 'unknown metric "layers.llm.latncyMs.p99" (did you mean layers.llm.latencyMs.p99?)'],
    ['shed.budgte', 'unknown metric "shed.budgte" (did you mean shed.budget?)'],
    ['frobnicate', 'unknown metric "frobnicate"'],
    ['series.ok', 'unknown metric "series.ok"'],
  ])('refuses %s with a clear message', (name, message) => {
    expect(() => catalog.resolve(name)).toThrow(new GateError(message));
  });

  it('is built from a result file by the layers and models it holds', () => {
    const c = MetricCatalog.ofResult({
      schema: 'stormlab.result/v1',
      scenario: 's',
      seed: 1,
      mode: 'sim',
      variants: [run],
      timing: { wallMs: 0, attemptsPerSec: 0 },
    });
    expect(c.layers).toEqual(['orchestrator', 'agent', 'llm']);
    expect(c.models).toEqual(['primary']);
    expect(c.list()).toContain('layers.agent.latencyMs.p95');
    expect(c.list()).not.toContain('layers.agent.p95');
  });
});
