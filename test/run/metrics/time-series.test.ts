import { describe, expect, it } from 'vitest';
import { BIN_MS, TimeSeries, binOf } from '../../../src/run/metrics/time-series.js';

describe('TimeSeries', () => {
  it('puts values in 1-second bins (negative times in bin 0)', () => {
    expect([binOf(-5), binOf(0), binOf(999.9), binOf(1000), binOf(61_234)]).toEqual([0, 0, 0, 1, 61]);
    expect(BIN_MS).toBe(1000);
  });

  it('adds counters, sets gauges, keeps the max of flags', () => {
    const s = new TimeSeries(['a', 'g', 'f'] as const, 5_000);
    const [a, g, f] = [s.index('a'), s.index('g'), s.index('f')];
    s.add(a, 10, 1);
    s.add(a, 999, 2);
    s.add(a, 2500, 5);
    s.set(g, 100, 0.5);
    s.set(g, 900, 0.25);
    s.max(f, 1000, 1);
    s.max(f, 1500, 0);
    expect(s.length).toBe(3);
    expect(s.toJSON()).toEqual({ a: [3, 0, 5], g: [0.25, 0, 0], f: [0, 1, 0] });
    expect(s.sum(a, -3, 10)).toBe(8);
    expect(s.get(a, 2)).toBe(5);
    expect(s.get(a, 7)).toBe(0);
  });

  it('grows past its expected length without losing bins', () => {
    const s = new TimeSeries(['n'], 1_000);
    for (let sec = 0; sec < 500; sec++) s.add(0, sec * 1000 + 1, sec);
    const values = s.slice(0);
    expect(values.length).toBe(500);
    expect(values.every((v, i) => v === i)).toBe(true);
  });

  it('slices a window, with zeros past the bins written', () => {
    const s = new TimeSeries(['n']);
    s.add(0, 0, 1);
    s.add(0, 1000, 2);
    expect(s.slice(0, 1, 4)).toEqual([2, 0, 0]);
    expect(s.toJSON(0, 1)).toEqual({ n: [1] });
  });

  it('names an unknown field', () => {
    const s = new TimeSeries(['n'] as string[]);
    expect(() => s.index('x')).toThrow(/unknown time-series field "x"/);
  });
});
