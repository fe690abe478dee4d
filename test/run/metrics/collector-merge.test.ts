import { describe, expect, it } from 'vitest';
import { SHED_REASONS } from '../../../src/engine/errors.js';
import { SeededRandom } from '../../../src/engine/random.js';
import { MetricsCollector, type MetricsCollectorOptions } from '../../../src/run/metrics/collector.js';

const OPTIONS: MetricsCollectorOptions = {
  layers: ['orchestrator', 'agent', 'llm'],
  models: ['primary', 'fallback'],
  durationMs: 20_000,
  streamLayers: ['llm'],
  tools: [{ name: 'search', sideEffect: false }],
  users: true,
  tenants: ['a', 'b'],
  inference: true,
  stages: true,
};

const STATUSES = [200, 200, 200, 429, 500, 503, 529, 0, -1, 400, 777];

const KINDS = 18;
const ENGINE_STATE = 16;

/** One random event of every kind the drivers report, at a random time of the run. */
function feed(c: MetricsCollector, r: SeededRandom, kind: number): void {
  const t = r.next() * 22_000;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r.next() * xs.length)];
  const layer = Math.floor(r.next() * 3);
  const model = Math.floor(r.next() * 2);
  switch (kind) {
    case 0:
      return c.rootOffered(t);
    case 1:
      return c.rootDone(t - r.next() * 9000, t, r.next() < 0.7, r.next() < 0.8, r.next() < 0.1);
    case 2:
      return c.logicalCall(layer, 1 + Math.floor(r.next() * 3), t);
    case 3:
      return c.attempt(layer, t, r.next() < 0.3);
    case 4:
      return c.callDone(layer, t - r.next() * 5000, t, r.next() < 0.6);
    case 5:
      return c.shed(layer, pick(SHED_REASONS), t);
    case 6:
      return c.upstreamAttempt(model, t);
    case 7:
      return c.upstreamResponse(model, pick(STATUSES), Math.floor(r.next() * 4), Math.floor(r.next() * 500), t);
    case 8:
      return c.wasted(Math.floor(r.next() * 50), t, model, layer);
    case 9:
      c.streamDone(2, r.next() * 3000, t);
      return c.truncatedSuccess(layer, t);
    case 10:
      c.toolLogical(0, 1);
      c.toolAttempt(0, r.next() < 0.4, t);
      return c.toolAnswer(0, pick([200, 409, 429, 503, -1]), t);
    case 11:
      c.toolDone(0, t - r.next() * 800, t, Math.floor(r.next() * 3));
      return c.toolShed(0, pick(SHED_REASONS), t);
    case 12:
      c.tenantOffered(model, t);
      return c.tenantDone(model, r.next() < 0.7, r.next() < 0.8, t);
    case 13:
      return c.entryRefused(model, 100, t);
    case 14:
      c.inferenceQueued(r.next() * 2000, t);
      return c.inferenceGaveUp(r.next() < 0.5, t);
    case 15:
      c.rootDegraded(t);
      return c.userSubmit(r.next() < 0.5, r.next() < 0.5, t);
    case ENGINE_STATE:
      return c.engineState(1, t, {
        dropProbability: r.next(),
        budgetBalance: r.next() * 10,
        breakerOpen: r.next() < 0.2,
      });
    default:
      return c.faultActive(t, r.next() < 0.3);
  }
}

describe('MetricsCollector.state / absorb', () => {
  it("a fleet's shares merged give the result of one collector that heard every event, to the byte", () => {
    const all = new MetricsCollector(OPTIONS);
    const workers = [0, 1, 2].map(() => new MetricsCollector(OPTIONS));
    const r = new SeededRandom(2929);
    for (let i = 0; i < 40_000; i++) {
      const kind = Math.floor(r.next() * KINDS);
      const w = kind === ENGINE_STATE ? workers[0] : workers[Math.floor(r.next() * 3)];
      feed(all, r.split(`event:${i}`), kind);
      feed(w, r.split(`event:${i}`), kind);
    }
    // Engine gauges merge by the larger value (below), so only one worker samples them here.
    const merged = new MetricsCollector(OPTIONS);
    for (const w of workers) merged.absorb(JSON.parse(JSON.stringify(w.state())));
    expect(JSON.stringify(merged.result({ name: 'engine' }))).toBe(JSON.stringify(all.result({ name: 'engine' })));
    const counts = workers.map((w) => w.result({ name: 'x' }));
    const m = merged.result({ name: 'x' });
    expect(m.roots.offered).toBe(counts.reduce((n, c) => n + c.roots.offered, 0));
    expect(m.upstream.attempts).toBe(counts.reduce((n, c) => n + c.upstream.attempts, 0));
    expect(m.layers[2].attempts).toBe(counts.reduce((n, c) => n + c.layers[2].attempts, 0));
  });

  it('the merged p99 is the p99 of one histogram of every recorded sample, and within its precision of the exact one', () => {
    const r = new SeededRandom(29);
    const samples: number[] = [];
    const one = new MetricsCollector(OPTIONS);
    const workers = [0, 1, 2].map(() => new MetricsCollector(OPTIONS));
    for (let i = 0; i < 30_000; i++) {
      // Long-tailed root latencies: most near 200 ms, a few up to ~20 s.
      const ms = Math.round(50 + 150 * Math.exp(r.next() * 4.6 * (r.next() < 0.05 ? 1 : 0.3)));
      samples.push(ms);
      const end = 1000 + i * 0.5;
      one.rootDone(end - ms, end, true, true, false);
      workers[Math.floor(r.next() * 3)].rootDone(end - ms, end, true, true, false);
    }
    const merged = new MetricsCollector(OPTIONS);
    for (const w of workers) merged.absorb(JSON.parse(JSON.stringify(w.state())));
    const got = merged.result({ name: 'x' }).roots.latencyMs;
    expect(got).toEqual(one.result({ name: 'x' }).roots.latencyMs);
    const sorted = [...samples].sort((a, b) => a - b);
    const exact = (q: number): number => sorted[Math.ceil(q * sorted.length) - 1];
    // An HDR histogram of 3 significant digits: within 0.1 % of the exact sample.
    for (const [q, v] of [
      [0.5, got.p50],
      [0.99, got.p99],
    ] as const)
      expect(Math.abs(v - exact(q)) / exact(q)).toBeLessThan(0.001 + 1e-9);
    // Percentiles of the workers' own, averaged, are not it.
    const each = workers.map((w) => w.result({ name: 'x' }).roots.latencyMs.p99);
    expect(each.reduce((a, b) => a + b, 0) / 3).not.toBe(got.p99);
  });

  it('keeps the larger engine gauge and fault flag of two workers in each second', () => {
    const a = new MetricsCollector(OPTIONS);
    const b = new MetricsCollector(OPTIONS);
    a.engineState(1, 500, { dropProbability: 0.2, budgetBalance: 4, breakerOpen: false });
    b.engineState(1, 700, { dropProbability: 0.5, budgetBalance: 1, breakerOpen: true });
    b.faultActive(1500, true);
    const m = new MetricsCollector(OPTIONS);
    m.absorb(a.state());
    m.absorb(b.state());
    const s = m.result({ name: 'x' }).series;
    const e = s.engine[0];
    expect([e.layer, e.dropProbability[0], e.budgetBalance[0], e.breakerOpen[0]]).toEqual(['agent', 0.5, 4, 1]);
    expect(s.faultActive.slice(0, 2)).toEqual([0, 1]);
  });

  it("refuses another run's shape", () => {
    const other = new MetricsCollector({ ...OPTIONS, layers: ['a', 'b'], streamLayers: [] });
    expect(() => new MetricsCollector(OPTIONS).absorb(other.state())).toThrow(/length|call tree/);
  });
});
