import fc from 'fast-check';
import { build } from 'hdr-histogram-js';
import { describe, expect, it } from 'vitest';
import { HISTOGRAM_MAX_MS, LatencyHistogram } from '../../../src/run/metrics/histogram.js';

/** The exact value at percentile p of sorted values, the HDR way: the smallest value with at least p % at or below it. */
function exact(sorted: number[], p: number): number {
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1];
}

/** HDR at 3 significant digits reports a value within 0.1 % (plus the 1 ms unit) of a recorded one. */
function near(actual: number, expected: number): boolean {
  return Math.abs(actual - expected) <= Math.max(1, expected * 0.001);
}

/** hdr-histogram-js (its JS build) with the layout LatencyHistogram copies: the reference it must agree with. */
function reference() {
  return build({
    bitBucketSize: 64,
    autoResize: false,
    lowestDiscernibleValue: 1,
    highestTrackableValue: HISTOGRAM_MAX_MS,
    numberOfSignificantValueDigits: 3,
    useWebAssembly: false,
  });
}

const PERCENTILES = [0, 0.1, 1, 25, 50, 90, 95, 99, 99.9, 99.99, 100];

describe('LatencyHistogram', () => {
  it('percentiles match a brute-force sort', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: HISTOGRAM_MAX_MS }), { minLength: 1, maxLength: 300 }),
        (values) => {
          const h = new LatencyHistogram();
          for (const v of values) h.record(v);
          const sorted = [...values].sort((a, b) => a - b);
          for (const p of [0.1, 50, 90, 95, 99, 100]) expect(near(h.percentile(p), exact(sorted, p))).toBe(true);
          expect(h.count).toBe(values.length);
          expect(h.max).toBe(sorted[sorted.length - 1]);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('answers as hdr-histogram-js does: every percentile, the max and the mean', () => {
    // Values spread over every bucket (log-uniform) and piled on bucket edges, where an off-by-one shows.
    const value = fc.oneof(
      fc.double({ min: 0, max: Math.log(HISTOGRAM_MAX_MS), noNaN: true }).map((x) => Math.round(Math.exp(x))),
      fc.integer({ min: 1, max: 21 }).chain((k) => fc.constantFrom(2 ** k - 1, 2 ** k, 2 ** k + 1)),
      fc.constant(0),
    );
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 2000 }), (values) => {
        const h = new LatencyHistogram();
        const r = reference();
        for (const v of values) {
          h.record(v);
          r.recordValue(Math.min(v, HISTOGRAM_MAX_MS));
        }
        for (const p of PERCENTILES) expect(h.percentile(p)).toBe(Math.min(r.getValueAtPercentile(p), r.maxValue));
        expect(h.max).toBe(r.maxValue);
        expect(h.mean).toBeCloseTo(r.mean, 9);
        expect(h.count).toBe(r.totalCount);
      }),
      { numRuns: 80 },
    );
  });

  it('agrees with hdr-histogram-js on a large count too (the rank rounding at 10⁶ values)', () => {
    const h = new LatencyHistogram();
    const r = reference();
    for (let i = 0; i < 1_000_000; i++) {
      const v = (i * 7919) % 250_000;
      h.record(v);
      r.recordValue(v);
    }
    for (const p of [...PERCENTILES, 33.3, 66.7, 99.999])
      expect(h.percentile(p)).toBe(Math.min(r.getValueAtPercentile(p), r.maxValue));
    expect(h.mean).toBeCloseTo(r.mean, 6);
  });

  it('gives exact values below 2048 ms (one-ms resolution there)', () => {
    const h = new LatencyHistogram();
    for (let v = 1; v <= 1000; v++) h.record(v);
    expect(h.percentile(50)).toBe(500);
    expect(h.percentile(95)).toBe(950);
    expect(h.percentile(99)).toBe(990);
    expect(h.max).toBe(1000);
    expect(h.mean).toBeCloseTo(500.5, 6);
  });

  it('reads a value above 2048 back as the top of its bucket, never above the max', () => {
    const h = new LatencyHistogram();
    h.record(6000);
    h.record(6001);
    h.record(9000);
    expect(h.percentile(50)).toBe(6003); // 6000 and 6001 share the bucket 6000 .. 6003
    expect(h.percentile(100)).toBe(9000);
    expect(h.percentile(0)).toBe(6000);
  });

  it('rounds to whole ms and clamps to 0 .. 1 h', () => {
    const h = new LatencyHistogram();
    h.record(-5);
    h.record(Number.NaN);
    h.record(2.6);
    h.record(10 * HISTOGRAM_MAX_MS);
    expect(h.count).toBe(4);
    expect(h.percentile(25)).toBe(0);
    expect(h.percentile(75)).toBe(3);
    expect(h.max).toBe(HISTOGRAM_MAX_MS);
  });

  it('is empty-safe and resets', () => {
    const h = new LatencyHistogram();
    expect([h.count, h.max, h.mean, h.percentile(99)]).toEqual([0, 0, 0, 0]);
    h.record(42);
    h.reset();
    expect([h.count, h.max, h.percentile(50)]).toEqual([0, 0, 0]);
  });

  it('merges another histogram, leaving it unchanged', () => {
    const a = new LatencyHistogram();
    const b = new LatencyHistogram();
    for (let v = 1; v <= 100; v++) a.record(v);
    for (let v = 101; v <= 200; v++) b.record(v);
    b.record(50_000);
    a.merge(b);
    expect(a.count).toBe(201);
    expect(a.percentile(50)).toBe(101);
    expect(a.max).toBe(50_000);
    expect([b.count, b.percentile(0)]).toEqual([101, 101]);
  });
});
