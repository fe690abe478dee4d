import { describe, expect, it } from 'vitest';
import { recoveryTime } from '../../../src/run/metrics/recovery-time.js';

const F = (...bins: number[]) => bins;

describe('recoveryTime', () => {
  it('is 0 when there was no fault', () => {
    expect(recoveryTime(F(10, 10, 10), F(0, 0, 0), 3, 1000)).toBe(0);
  });

  it('is 0 when goodput never dropped', () => {
    expect(recoveryTime(F(10, 10, 10, 10, 10, 10), F(0, 0, 1, 1, 0, 0), 6, 1000)).toBe(0);
  });

  it('counts the seconds after the last fault until goodput is back to 90 % of the pre-fault mean', () => {
    // baseline mean(10, 10) = 10 → threshold 9; faults in bins 2..3 and 5; back in bin 9.
    const goodput = F(10, 10, 0, 0, 4, 0, 2, 5, 8.9, 9, 10);
    const fault = F(0, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0);
    expect(recoveryTime(goodput, fault, 11, 1000)).toBe(3000);
  });

  it('is null when goodput does not come back within the run', () => {
    expect(recoveryTime(F(10, 10, 0, 1, 2, 3), F(0, 0, 1, 0, 0, 0), 6, 1000)).toBeNull();
  });

  it('only looks within the run (bins past it are drain time)', () => {
    expect(recoveryTime(F(10, 10, 0, 1, 10), F(0, 0, 1, 0, 0), 4, 1000)).toBeNull();
    expect(recoveryTime(F(10, 10, 0, 1, 10), F(0, 0, 1, 0, 0), 5, 1000)).toBe(1000);
  });

  it('is null when the fault is still on at the end, or there is no bin before it', () => {
    expect(recoveryTime(F(10, 10, 10), F(0, 1, 1), 3, 1000)).toBeNull();
    expect(recoveryTime(F(10, 10, 10), F(1, 0, 0), 3, 1000)).toBeNull();
  });
});
