import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OptionError } from '../../src/engine/errors.js';
import { RETRY_BUDGET_RANGES, RetryBudget } from '../../src/engine/retry-budget.js';
import { MemoryStore } from '../../src/engine/store.js';

describe('RetryBudget', () => {
  it('allows ratio × first attempts plus the floor over the window', () => {
    const budget = new RetryBudget({ ratio: 0.1, windowMs: 10_000, buckets: 10, minRetriesPerSec: 0 });
    for (let i = 0; i < 100; i++) budget.recordFirst(0);
    let granted = 0;
    while (budget.tryRetry(0)) granted++;
    expect(granted).toBe(10);
    expect(budget.balance(0)).toBeCloseTo(0);
  });

  it('lets a quiet service retry at the floor rate', () => {
    const budget = new RetryBudget({ ratio: 0.1, windowMs: 10_000, minRetriesPerSec: 1 });
    let granted = 0;
    while (budget.tryRetry(0)) granted++;
    expect(granted).toBe(10);
  });

  it('counts each first attempt once (the seed counted the total twice)', () => {
    const budget = new RetryBudget({ ratio: 0.5, minRetriesPerSec: 0 });
    budget.recordFirst(0);
    budget.recordFirst(0);
    expect(budget.tryRetry(0)).toBe(true);
    expect(budget.tryRetry(0)).toBe(false);
  });

  it('forgets deposits and withdrawals as the window slides past them', () => {
    const budget = new RetryBudget({ ratio: 0.1, windowMs: 10_000, buckets: 10, minRetriesPerSec: 0 });
    for (let i = 0; i < 50; i++) budget.recordFirst(0);
    expect(budget.tryRetry(500)).toBe(true);
    expect(budget.balance(9_999)).toBeCloseTo(4);
    expect(budget.balance(10_000)).toBe(0);
    expect(budget.tryRetry(10_000)).toBe(false);
  });

  it('canRetry does not spend; withdraw does', () => {
    const budget = new RetryBudget({ ratio: 0, minRetriesPerSec: 0.1, windowMs: 10_000 });
    expect(budget.canRetry(0)).toBe(true);
    expect(budget.canRetry(0)).toBe(true);
    budget.withdraw(0);
    expect(budget.canRetry(0)).toBe(false);
  });

  it('shares one budget between two instances on the same store key', () => {
    const store = new MemoryStore();
    const a = new RetryBudget({ ratio: 0.5, minRetriesPerSec: 0 }, store);
    const b = new RetryBudget({ ratio: 0.5, minRetriesPerSec: 0 }, store);
    a.recordFirst(0);
    a.recordFirst(0);
    expect(b.tryRetry(0)).toBe(true);
    expect(a.tryRetry(0)).toBe(false);
  });

  it('rejects bad options naming the option and the value', () => {
    expect(() => new RetryBudget({ ratio: -1 })).toThrow(
      // The option, its range and the value as fields, so a caller can say it its own way.
      new OptionError('retryBudget.ratio must be a number >= 0 and <= 1000, got -1', 'retryBudget.ratio', {
        value: -1,
        range: RETRY_BUDGET_RANGES.ratio,
      }),
    );
    expect(() => new RetryBudget({ windowMs: 0 })).toThrow(/retryBudget.windowMs must be a number > 0, got 0/);
    expect(() => new RetryBudget({ buckets: 1.5 })).toThrow(
      /retryBudget.buckets must be an integer from 1 to 10000, got 1.5/,
    );
    expect(() => new RetryBudget({ minRetriesPerSec: Number.NaN })).toThrow(/retryBudget.minRetriesPerSec .* got NaN/);
  });

  it('property: at every retry, retries in the window <= ratio × firsts in the window + floor × window', () => {
    const op = fc.record({
      dt: fc.integer({ min: 0, max: 3_000 }),
      kind: fc.constantFrom('first', 'retry', 'retry', 'first'),
    });
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 5, noNaN: true }),
        fc.integer({ min: 1, max: 20 }),
        fc.array(op, { maxLength: 300 }),
        (ratio, floor, buckets, ops) => {
          const windowMs = 10_000;
          const budget = new RetryBudget({ ratio, minRetriesPerSec: floor, windowMs, buckets });
          const bucketMs = windowMs / buckets;
          const firsts: number[] = [];
          const retries: number[] = [];
          let now = 0;
          for (const { dt, kind } of ops) {
            now += dt;
            if (kind === 'first') {
              budget.recordFirst(now);
              firsts.push(now);
              continue;
            }
            if (!budget.tryRetry(now)) continue;
            retries.push(now);
            // The window at `now`: the current bucket and the buckets - 1 before it.
            const from = (Math.floor(now / bucketMs) - buckets + 1) * bucketMs;
            const r = retries.filter((t) => t >= from).length;
            const f = firsts.filter((t) => t >= from).length;
            expect(r).toBeLessThanOrEqual(ratio * f + (floor * windowMs) / 1000 + 1e-9);
          }
        },
      ),
    );
  });
});
