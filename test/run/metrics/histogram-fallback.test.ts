import { describe, expect, it } from 'vitest';
import { LatencyHistogram, histogramsUseWasm } from '../../../src/run/metrics/histogram.js';

// A test file has its own module registry: here initHistograms() was never called.
describe('LatencyHistogram without initHistograms()', () => {
  it('falls back to the JS build, even when wasm is asked for', () => {
    expect(histogramsUseWasm()).toBe(false);
    const a = new LatencyHistogram();
    const b = new LatencyHistogram({ wasm: true });
    expect([a.kind, b.kind]).toEqual(['js', 'js']);
    for (let v = 1; v <= 100; v++) b.record(v);
    expect(b.percentile(99)).toBe(99);
    a.destroy();
    b.destroy();
  });
});
