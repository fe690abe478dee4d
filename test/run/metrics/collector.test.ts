import { describe, expect, it } from 'vitest';
import { OptionError } from '../../../src/engine/errors.js';
import { MetricsCollector } from '../../../src/run/metrics/collector.js';

function collector(
  durationMs = 10_000,
  layers = ['orchestrator', 'agent', 'llm'],
  models = ['primary', 'fallback'],
): MetricsCollector {
  return new MetricsCollector({ layers, models, durationMs });
}

/** One root at full outage with naive 3 attempts per layer over 3 layers: 3 × 3 × 3 upstream attempts. */
function naiveOutage(c: MetricsCollector, start: number): void {
  c.rootOffered(start);
  for (let layer = 0; layer < 3; layer++) c.logicalCall(layer, 1, start);
  for (let o = 0; o < 3; o++) {
    c.attempt(0, start, o > 0);
    for (let a = 0; a < 3; a++) {
      c.attempt(1, start, a > 0);
      for (let l = 0; l < 3; l++) {
        c.attempt(2, start, l > 0);
        c.upstreamAttempt(0, start);
        c.upstreamResponse(0, 503, 0, 0, start + 10);
      }
      c.callDone(2, start, start + 30, false);
    }
    c.callDone(1, start, start + 90, false);
  }
  c.callDone(0, start, start + 270, false);
  c.rootDone(start, start + 270, false, true);
}

describe('MetricsCollector', () => {
  it('checks its options', () => {
    expect(() => collector(0)).toThrow(OptionError);
    expect(() => collector(0)).toThrow('metrics.durationMs must be a number > 0, got 0');
    expect(() => collector(1000, [])).toThrow(/metrics\.layers/);
    const c = collector();
    expect(c.layerIndex('agent')).toBe(1);
    expect(c.modelIndex('fallback')).toBe(1);
    expect(() => c.layerIndex('nope')).toThrow('unknown layer "nope"; known: orchestrator, agent, llm');
  });

  it('naive 3 attempts × 3 layers at full outage is 27.0× amplification', () => {
    const c = collector();
    for (let i = 0; i < 5; i++) naiveOutage(c, i * 1000);
    const r = c.result({ name: 'naive' });
    expect(r.amplification).toBe(27);
    expect(r.layers.map((l) => [l.name, l.logicalCalls, l.attempts, l.retries, l.amplification])).toEqual([
      ['orchestrator', 5, 15, 10, 3],
      ['agent', 5, 45, 30, 9],
      ['llm', 5, 135, 90, 27],
    ]);
    expect(r.layers[2].successRate).toBe(0);
    expect(r.layers[2].latencyMs).toEqual({ p50: 30, p95: 30, p99: 30 });
    expect(r.upstream.attempts).toBe(135);
    expect(r.upstream.status).toEqual({ 503: 135 });
    expect(r.upstream.share).toEqual({ '429': 0, '5xx': 1, timeout: 0 });
    expect(r.goodput).toBe(0);
    expect(r.successRate).toBe(0);
    expect(r.roots).toMatchObject({ offered: 5, ok: 0, late: 0, failed: 5, unfinished: 0 });
  });

  it('computes goodput, success rate and root latency from the intended start', () => {
    const c = collector(10_000);
    for (let i = 0; i < 20; i++) c.rootOffered(i * 100);
    for (let i = 0; i < 15; i++) c.rootDone(i * 100, i * 100 + 200 + i, true, true);
    c.rootDone(0, 5000, true, false);
    c.rootDone(0, 6000, true, false);
    c.rootDone(0, 50, false, true);
    const r = c.result({ name: 'engine' });
    expect(r.goodput).toBe(1.5); // 15 ok within deadline over 10 s
    expect(r.successRate).toBe(0.75);
    expect(r.roots).toEqual({
      offered: 20,
      ok: 15,
      late: 2,
      failed: 1,
      unfinished: 2,
      latencyMs: { p50: 207, p95: 6000, p99: 6000, max: 6000 },
    });
    expect(r.series.offered.slice(0, 3)).toEqual([10, 10, 0]);
    expect(r.series.ok.slice(0, 3)).toEqual([8, 7, 0]);
    expect(r.series.ok.length).toBe(10);
  });

  it('counts shed calls by reason and layer', () => {
    const c = collector();
    for (let i = 0; i < 4; i++) c.shed(1, 'throttle', 1500);
    c.shed(1, 'budget', 2500);
    c.shed(1, 'budget', 2600);
    c.shed(2, 'breaker', 100);
    const r = c.result({ name: 'x' });
    expect(r.layers[0].shed).toEqual({});
    expect(r.layers[1].shed).toEqual({ throttle: 4, budget: 2 });
    expect(r.layers[2].shed).toEqual({ breaker: 1 });
    expect(r.series.shed.slice(0, 3)).toEqual([1, 4, 2]);
  });

  it('counts upstream statuses, 429s by limit, tokens and wasted tokens per model', () => {
    const c = collector();
    const responses: Array<[number, number, number, number]> = [
      [0, 429, 1, 0],
      [0, 429, 2, 0],
      [1, 429, 2, 0],
      [1, 429, 3, 0],
      [0, 200, 0, 100],
      [1, 529, 0, 0],
      [0, 0, 0, 0],
      [1, -1, 0, 0],
    ];
    for (const [m, status, detail, tokens] of responses) {
      c.upstreamAttempt(m, 500);
      c.upstreamResponse(m, status, detail, tokens, 700);
    }
    c.wasted(50, 800, 0);
    c.wasted(30, 800);
    const { upstream, series } = c.result({ name: 'x' });
    expect(upstream.attempts).toBe(8);
    expect(upstream.status).toEqual({ 200: 1, 429: 4, 529: 1, reset: 1, timeout: 1 });
    expect(upstream.rateLimited).toEqual({ requests: 1, tokens: 2, quota: 1 });
    expect(upstream.share).toEqual({ '429': 0.5, '5xx': 0.125, timeout: 0.25 });
    expect(upstream.tokensServed).toBe(100);
    expect(upstream.wastedTokens).toBe(80);
    const [primary, fallback] = upstream.models;
    expect(primary).toMatchObject({
      name: 'primary',
      attempts: 4,
      wastedTokens: 50,
      tokensServed: 100,
      rateLimited: { requests: 1, tokens: 1, quota: 0 },
    });
    expect(fallback).toMatchObject({
      name: 'fallback',
      attempts: 4,
      status: { 429: 2, 529: 1, timeout: 1 },
      share: { '429': 0.5, '5xx': 0.25, timeout: 0.25 },
    });
    expect([series.upstreamAttempts[0], series.status429[0], series.status5xx[0], series.timeouts[0]]).toEqual([
      8, 4, 1, 2,
    ]);
  });

  it('keeps engine timelines only for the layers that sampled them', () => {
    const c = collector(3000);
    for (let s = 0; s < 3; s++)
      c.engineState(1, s * 1000, { dropProbability: s / 3, budgetBalance: 10 - s, breakerOpen: s === 1 });
    const { engine } = c.result({ name: 'x' }).series;
    expect(engine).toEqual([
      { layer: 'agent', dropProbability: [0, 0.333333, 0.666667], budgetBalance: [10, 9, 8], breakerOpen: [0, 1, 0] },
    ]);
  });

  it('measures recovery time after the last fault phase', () => {
    const c = collector(10_000, ['llm'], ['m']);
    const okPerSecond = [10, 10, 10, 2, 0, 3, 9, 10, 10, 10];
    okPerSecond.forEach((n, s) => {
      c.faultActive(s * 1000, s === 3 || s === 4);
      for (let i = 0; i < n; i++) c.rootDone(s * 1000, s * 1000 + i, true, true);
    });
    const r = c.result({ name: 'x' });
    expect(r.series.faultActive).toEqual([0, 0, 0, 1, 1, 0, 0, 0, 0, 0]);
    expect(r.recoveryMs).toBe(1000); // bin 5 below 9, bin 6 back at 9
  });

  it('reports recovery 0 without faults and null when goodput never comes back', () => {
    const calm = collector(3000, ['llm'], ['m']);
    for (let s = 0; s < 3; s++) calm.rootDone(s * 1000, s * 1000, true, true);
    expect(calm.result({ name: 'x' }).recoveryMs).toBe(0);
    const dead = collector(5000, ['llm'], ['m']);
    for (let s = 0; s < 5; s++) {
      dead.faultActive(s * 1000, s === 2);
      if (s < 2) dead.rootDone(s * 1000, s * 1000, true, true);
    }
    expect(dead.result({ name: 'x' }).recoveryMs).toBeNull();
  });

  it('snapshots totals, recent amplification and the last 60 seconds', () => {
    const c = collector(120_000, ['llm'], ['m']);
    for (let s = 0; s < 90; s++) {
      const t = s * 1000 + 1;
      c.rootOffered(t);
      c.logicalCall(0, 1, t);
      const attempts = s < 80 ? 1 : 3; // a storm in the last 10 s
      for (let a = 0; a < attempts; a++) c.upstreamAttempt(0, t);
    }
    const snap = c.snapshot(89_500);
    expect(snap.t).toBe(89_500);
    expect(snap.progress).toBe(0.745833);
    expect(snap.amplification).toBe(round(110 / 90));
    expect(snap.amplificationLast5s).toBe(3);
    expect(snap.roots.unfinished).toBe(90);
    expect(snap.series.fromBin).toBe(30);
    expect(snap.series.upstreamAttempts.length).toBe(60);
    expect(snap.series.upstreamAttempts.at(-1)).toBe(3);
    expect(snap.series.upstreamAttempts[0]).toBe(1);
    expect(snap.layers[0].logicalCalls).toBe(90);
  });

  it('gives the same result twice (no hidden state changes)', () => {
    const c = collector();
    naiveOutage(c, 0);
    expect(c.result({ name: 'a' })).toEqual(c.result({ name: 'a' }));
    expect(c.result({ name: 'a', durationMs: 5000 }).durationMs).toBe(5000);
  });
});

function round(x: number): number {
  return Number(x.toPrecision(6));
}
