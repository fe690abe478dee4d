import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  HISTOGRAM_MAX_MS,
  LatencyHistogram,
  histogramsUseWasm,
  initHistograms,
} from '../../../src/run/metrics/histogram.js';

/** The exact value at percentile p of sorted values, the HDR way: the smallest value with at least p % at or below it. */
function exact(sorted: number[], p: number): number {
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1];
}

/** HDR at 3 significant digits reports a value within 0.1 % (plus the 1 ms unit) of a recorded one. */
function near(actual: number, expected: number): boolean {
  return Math.abs(actual - expected) <= Math.max(1, expected * 0.001);
}

describe('LatencyHistogram', () => {
  beforeAll(async () => {
    await initHistograms();
  });

  it('initialises the WebAssembly build once (idempotent)', async () => {
    await initHistograms();
    await initHistograms();
    expect(histogramsUseWasm()).toBe(true);
    const h = new LatencyHistogram();
    expect(h.kind).toBe('wasm');
    h.destroy();
  });

  for (const wasm of [true, false]) {
    const kind = wasm ? 'wasm' : 'js';
    it(`${kind}: percentiles match a brute-force sort`, () => {
      fc.assert(
        fc.property(
          fc.array(fc.integer({ min: 1, max: HISTOGRAM_MAX_MS }), { minLength: 1, maxLength: 300 }),
          (values) => {
            const h = new LatencyHistogram({ wasm });
            expect(h.kind).toBe(kind);
            for (const v of values) h.record(v);
            const sorted = [...values].sort((a, b) => a - b);
            for (const p of [0.1, 50, 90, 95, 99, 100]) expect(near(h.percentile(p), exact(sorted, p))).toBe(true);
            expect(h.count).toBe(values.length);
            expect(near(h.max, sorted[sorted.length - 1])).toBe(true);
            h.destroy();
          },
        ),
        { numRuns: 60 },
      );
    });

    it(`${kind}: gives exact values below 2048 ms (one-ms resolution there)`, () => {
      const h = new LatencyHistogram({ wasm });
      for (let v = 1; v <= 1000; v++) h.record(v);
      expect(h.percentile(50)).toBe(500);
      expect(h.percentile(95)).toBe(950);
      expect(h.percentile(99)).toBe(990);
      expect(h.max).toBe(1000);
      expect(h.mean).toBeCloseTo(500.5, 6);
      h.destroy();
    });

    it(`${kind}: rounds to whole ms and clamps to 0 .. 1 h`, () => {
      const h = new LatencyHistogram({ wasm });
      h.record(-5);
      h.record(Number.NaN);
      h.record(2.6);
      h.record(10 * HISTOGRAM_MAX_MS);
      expect(h.count).toBe(4);
      expect(h.percentile(25)).toBe(0);
      expect(h.percentile(75)).toBe(3);
      expect(near(h.max, HISTOGRAM_MAX_MS)).toBe(true);
      h.destroy();
    });

    it(`${kind}: is empty-safe and resets`, () => {
      const h = new LatencyHistogram({ wasm });
      expect([h.count, h.max, h.mean, h.percentile(99)]).toEqual([0, 0, 0, 0]);
      h.record(42);
      h.reset();
      expect([h.count, h.percentile(50)]).toEqual([0, 0]);
      h.destroy();
      h.destroy();
    });
  }

  it('wasm and js builds report the same percentiles', () => {
    const a = new LatencyHistogram({ wasm: true });
    const b = new LatencyHistogram({ wasm: false });
    for (let i = 0; i < 10_000; i++) {
      const v = (i * 7919) % 250_000;
      a.record(v);
      b.record(v);
    }
    for (const p of [50, 90, 95, 99, 99.9]) expect(a.percentile(p)).toBe(b.percentile(p));
    expect(a.max).toBe(b.max);
    a.destroy();
    b.destroy();
  });

  for (const [into, from] of [
    [true, true],
    [false, false],
    [true, false],
    [false, true],
  ] as const) {
    it(`merges ${from ? 'wasm' : 'js'} into ${into ? 'wasm' : 'js'}`, () => {
      const a = new LatencyHistogram({ wasm: into });
      const b = new LatencyHistogram({ wasm: from });
      for (let v = 1; v <= 100; v++) a.record(v);
      for (let v = 101; v <= 200; v++) b.record(v);
      a.merge(b);
      expect(a.count).toBe(200);
      expect(a.percentile(50)).toBe(100);
      expect(a.max).toBe(200);
      expect(b.count).toBe(100);
      a.destroy();
      b.destroy();
    });
  }

  it('a destroyed wasm histogram refuses further use', () => {
    const h = new LatencyHistogram({ wasm: true });
    h.destroy();
    expect(() => h.record(1)).toThrow();
  });
});
