import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../../src/engine/random.js';
import { LatencyHistogram } from '../../../src/run/metrics/histogram.js';

/** The exact value at percentile p of sorted values: the smallest with at least p % at or below it. */
function exact(sorted: number[], p: number): number {
  return sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1];
}

describe('LatencyHistogram.encode / decode', () => {
  it('gives back every count, so a histogram travels between processes exactly', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 4_000_000 }), { maxLength: 300 }), (values) => {
        const h = new LatencyHistogram();
        for (const v of values) h.record(v);
        const back = LatencyHistogram.decode(JSON.parse(JSON.stringify(h.encode())));
        expect(back.count).toBe(h.count);
        expect(back.max).toBe(h.max);
        for (const p of [0, 1, 50, 90, 99, 99.9, 100]) expect(back.percentile(p)).toBe(h.percentile(p));
        expect(back.encode()).toEqual(h.encode());
      }),
    );
  });

  it('merged from three workers, its p99 is that of one histogram of every sample, within HDR precision of the samples', () => {
    const random = new SeededRandom(29);
    const all = new LatencyHistogram();
    const workers = [new LatencyHistogram(), new LatencyHistogram(), new LatencyHistogram()];
    const samples: number[] = [];
    for (let i = 0; i < 30_000; i++) {
      // A long tail, so the p99 sits far above the median, and each worker gets a different mix.
      const v = Math.round(-Math.log(1 - random.next()) * (i % 3 === 2 ? 900 : 120));
      samples.push(v);
      all.record(v);
      workers[i % 3].record(v);
    }
    const merged = new LatencyHistogram();
    for (const w of workers) merged.add(JSON.parse(JSON.stringify(w.encode())));
    const sorted = [...samples].sort((a, b) => a - b);
    for (const p of [50, 95, 99, 99.9]) expect(merged.percentile(p)).toBe(all.percentile(p));
    // Where the samples are dense, the figure is the recorded sample's, to HDR's 3 digits.
    for (const p of [50, 95, 99]) {
      expect(Math.abs(merged.percentile(p) - exact(sorted, p))).toBeLessThanOrEqual(
        Math.max(1, exact(sorted, p) * 0.001),
      );
    }
    expect(merged.count).toBe(samples.length);
    expect(merged.max).toBe(sorted.at(-1));
    // Averaging the workers' p99s, what a sum of separate runs gives, is not the p99.
    const averaged = workers.reduce((n, w) => n + w.percentile(99), 0) / workers.length;
    expect(Math.abs(averaged - merged.percentile(99))).toBeGreaterThan(100);
  });

  it('refuses what is not one of its encodings', () => {
    expect(() => LatencyHistogram.decode({ max: 5, counts: [1] })).toThrow(/pairs/);
    expect(() => LatencyHistogram.decode({ max: -1, counts: [] })).toThrow(/max/);
    expect(() => LatencyHistogram.decode({ max: 5, counts: [0, 3] })).toThrow(/pair 0/);
    expect(() => LatencyHistogram.decode({ max: 5, counts: [1e9, 3] })).toThrow(/pair 0/);
    expect(() => LatencyHistogram.decode({ max: 5, counts: [1, -2] })).toThrow(/pair 0/);
  });
});
