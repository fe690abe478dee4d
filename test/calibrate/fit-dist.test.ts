import { describe, expect, it } from 'vitest';
import { chiSquareSurvival, fitCount, fitTokens, poissonTest } from '../../src/calibrate/fit-dist.js';
import { SeededRandom } from '../../src/engine/random.js';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { meanOf, sampler } from '../../src/upstream/distribution.js';
import { Reservoir } from '../../src/calibrate/reservoir.js';

const of = (xs: number[]) => {
  const r = new Reservoir(4096);
  for (const x of xs) r.add(x);
  return r;
};

describe('token counts per call', () => {
  it('a handful of lengths (a tool call, then an answer) are taken as they are, weighted', () => {
    const f = fitTokens(of([...Array(300).fill(10), ...Array(100).fill(21)]));
    expect(f).toEqual({
      dist: { dist: 'choice', values: [10, 21], weights: [0.75, 0.25] },
      how: 'empirical over 2 values',
    });
  });

  it('one length is fixed; many are a log-normal', () => {
    expect(fitTokens(of(Array(50).fill(42)))).toEqual({ dist: 42, how: 'fixed' });
    const many = fitTokens(of(Array.from({ length: 400 }, (_, i) => 40 + (i % 80))));
    expect(many.how).toBe('log-normal');
    expect(many.dist).toMatchObject({ dist: 'lognormal' });
  });
});

describe('fan-out per call: fixed, Poisson by a χ² test, or empirical', () => {
  const counts = (xs: number[]) => {
    const m = new Map<number, number>();
    for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
    return m;
  };
  const random = new SeededRandom(28);
  const poissonDraws = (mean: number, n: number) =>
    Array.from({ length: n }, () => {
      let k = 0;
      let p = random.next();
      while (p > Math.exp(-mean)) {
        k++;
        p *= random.next();
      }
      return k;
    });

  it('the χ² survival function at its tabled 5 % and 1 % points', () => {
    for (const [df, x, p] of [
      [1, 3.841, 0.05],
      [3, 7.815, 0.05],
      [10, 18.307, 0.05],
      [2, 9.21, 0.01],
      [30, 50.892, 0.01],
    ])
      expect(chiSquareSurvival(df, x)).toBeCloseTo(p, 4);
    expect(chiSquareSurvival(4, 0)).toBe(1);
  });

  it('a Poisson test: p near 1 for counts as a Poisson expects them, near 0 for counts far from one', () => {
    // λ = 1 over 1,000 calls, its 0s drawn as 1s, exactly as expected: p near 1.
    const exact = new Map([
      [1, 736],
      [2, 184],
      [3, 61],
      [4, 15],
      [5, 4],
    ]);
    expect(poissonTest(exact)!.p).toBeGreaterThan(0.95);
    expect(poissonTest(exact)!.mean).toBeCloseTo(1, 1);
    // Every call 1 or 3 (mean 2): far from a Poisson.
    expect(poissonTest(counts([...Array(200).fill(1), ...Array(200).fill(3)]))!.p).toBeLessThan(0.001);
  });

  it('draws of a Poisson (0 taken as 1, as a scenario draws them) are fitted as one, with the p-value said', () => {
    const f = fitCount(counts(poissonDraws(3, 400).map((k) => Math.max(1, k))));
    expect(f.dist).toMatchObject({ dist: 'poisson' });
    expect((f.dist as { mean: number }).mean).toBeGreaterThan(2.7);
    expect((f.dist as { mean: number }).mean).toBeLessThan(3.3);
    expect(f.how).toMatch(
      /^Poisson \(mean [\d.]+, a draw of 0 is 1: [\d.]+ per call; χ² p = 0\.\d\d over 400 calls\)$/,
    );
  });

  it('two values (a second call only after a first that worked) are empirical, not Poisson; too few calls are not tested', () => {
    const f = fitCount(counts([...Array(95).fill(2), ...Array(5).fill(1)]));
    expect(f).toMatchObject({ dist: { dist: 'choice', values: [1, 2], weights: [0.05, 0.95] } });
    expect(f.how).toBe('empirical over 2 values (not Poisson: χ² p = < 0.001)');
    expect(fitCount(counts([1, 2, 3, 2, 1])).how).toBe(
      'empirical over 3 values (too few calls or values to test for Poisson)',
    );
    expect(fitCount(counts([4, 4, 4])).dist).toBe(4);
  });
});

describe('{dist: poisson} in a scenario', () => {
  it('draws whole numbers with its mean and variance (the normal approximation above 30)', () => {
    for (const mean of [0.5, 4, 50]) {
      const draw = sampler({ dist: 'poisson', mean }, new SeededRandom(5));
      const xs = Array.from({ length: 20_000 }, draw);
      expect(xs.every((x) => Number.isInteger(x) && x >= 0)).toBe(true);
      const m = xs.reduce((a, b) => a + b, 0) / xs.length;
      const v = xs.reduce((a, b) => a + (b - m) ** 2, 0) / xs.length;
      expect(Math.abs(m / mean - 1)).toBeLessThan(0.03);
      expect(Math.abs(v / mean - 1)).toBeLessThan(0.06);
    }
    expect(meanOf({ dist: 'poisson', mean: 2.5 })).toBe(2.5);
  });

  it('is a count or a fan-out, not a time', () => {
    const base = (fanout: string, ttft = '100ms') =>
      `name: p\nduration: 10s\narrival: { type: constant, rate: 1 }\ntokens: { prompt: { dist: poisson, mean: 100 }, completion: 50 }\nlayers:\n  - { name: a, fanout: ${fanout} }\n  - { name: llm, models: [m] }\nupstream:\n  models: [{ name: m, slots: 4, queue: 4, ttft: ${ttft}, tpot: 1ms }]\n`;
    expect(loadScenario(base('{ dist: poisson, mean: 2 }')).traffic.layers[0].fanout).toEqual({
      dist: 'poisson',
      mean: 2,
    });
    expect(() => loadScenario(base('2', '{ dist: poisson, mean: 100 }'))).toThrow(
      /upstream\.models\[0\]\.ttft\.dist: expected one of const, uniform, exponential, lognormal, choice, got "poisson"/,
    );
  });
});
