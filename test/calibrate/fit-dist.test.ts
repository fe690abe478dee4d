import { describe, expect, it } from 'vitest';
import { fitTokens } from '../../src/calibrate/fit-dist.js';
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
