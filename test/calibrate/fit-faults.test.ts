import { describe, expect, it } from 'vitest';
import { faultPhases } from '../../src/calibrate/fit-faults.js';

describe('fault phases from failures over time', () => {
  it('a long trace window (200,000 one-attempt seconds) is fitted, not a stack overflow', () => {
    const bins = new Map<number, [number, number]>();
    for (let k = 0; k < 200_000; k++) bins.set(k, [1, k % 4 === 0 ? 1 : 0]);
    const f = faultPhases({ statuses: [new Map([['429', 50_000]])], bins, noStatus: '' }, 0, 200_000_000);
    expect(f.phases).toHaveLength(1);
    expect(f.phases[0]).toMatchObject({ kind: 'errors', rate: 0.25, status: { 429: 1 } });
  });
});
