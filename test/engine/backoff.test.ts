import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { Backoff, BACKOFF_DEFAULTS, planRetry } from '../../src/engine/backoff.js';
import { SeededRandom, type Random } from '../../src/engine/random.js';
import { OptionError } from '../../src/engine/errors.js';

const fixed = (v: number): Random => ({ next: () => v });
const opts = fc.record({
  baseMs: fc.double({ min: 1, max: 5_000, noNaN: true }),
  capExtra: fc.double({ min: 0, max: 100_000, noNaN: true }),
  multiplier: fc.double({ min: 1, max: 4, noNaN: true }),
  seed: fc.integer(),
});

describe('Backoff options', () => {
  it('defaults to full jitter, 500 ms base, 20 s cap, ×2', () => {
    expect(new Backoff(undefined, fixed(0)).options).toEqual({
      strategy: 'full_jitter',
      baseMs: 500,
      capMs: 20_000,
      multiplier: 2,
    });
    expect(BACKOFF_DEFAULTS.strategy).toBe('full_jitter');
  });

  it.each([
    [
      { strategy: 'linear' },
      /backoff\.strategy must be one of full_jitter, decorrelated_jitter, exponential, got "linear"/,
    ],
    [{ baseMs: 0 }, /backoff\.baseMs must be a number > 0, got 0/],
    [{ baseMs: NaN }, /backoff\.baseMs .*got NaN/],
    [{ capMs: 100 }, /backoff\.capMs must be a number >= 500, got 100/],
    [{ multiplier: 0.5 }, /backoff\.multiplier must be a number >= 1, got 0\.5/],
  ])('rejects %o', (o, message) => {
    expect(() => new Backoff(o as never, fixed(0))).toThrow(OptionError);
    expect(() => new Backoff(o as never, fixed(0))).toThrow(message);
  });
});

describe('Backoff.delayMs', () => {
  it('exponential is exact: min(cap, base·mult^(n−1))', () => {
    const b = new Backoff({ strategy: 'exponential', baseMs: 100, capMs: 1_000 }, fixed(0.5));
    expect([1, 2, 3, 4, 5, 6].map((n) => b.delayMs(n))).toEqual([100, 200, 400, 800, 1_000, 1_000]);
    expect(b.delayMs(10_000)).toBe(1_000); // the power overflows to Infinity; the cap holds
    expect(b.delayMs(0)).toBe(100); // read as the first retry
  });

  it('full jitter scales the exponential ceiling by the random draw', () => {
    const b = new Backoff({ baseMs: 100, capMs: 1_000 }, fixed(0.25));
    expect([1, 2, 3, 5].map((n) => b.delayMs(n))).toEqual([25, 50, 100, 250]);
  });

  it('full jitter stays within [0, min(cap, base·mult^(n−1)))', () => {
    fc.assert(
      fc.property(opts, fc.integer({ min: 1, max: 60 }), ({ baseMs, capExtra, multiplier, seed }, n) => {
        const capMs = baseMs + capExtra;
        const b = new Backoff({ strategy: 'full_jitter', baseMs, capMs, multiplier }, new SeededRandom(seed));
        const ceiling = Math.min(capMs, baseMs * multiplier ** (n - 1));
        const d = b.delayMs(n);
        return d >= 0 && d < ceiling;
      }),
    );
  });

  it('decorrelated jitter stays within [base, cap] along a chain of retries', () => {
    fc.assert(
      fc.property(opts, fc.integer({ min: 1, max: 30 }), ({ baseMs, capExtra, multiplier, seed }, retries) => {
        const capMs = baseMs + capExtra;
        const b = new Backoff({ strategy: 'decorrelated_jitter', baseMs, capMs, multiplier }, new SeededRandom(seed));
        let prev: number | undefined;
        for (let n = 1; n <= retries; n++) {
          const d = b.delayMs(n, prev);
          if (!(d >= baseMs && d <= capMs)) return false;
          if (prev !== undefined && d > Math.max(prev, baseMs) * 3) return false; // grows at most ×3
          prev = d;
        }
        return true;
      }),
    );
  });

  it('decorrelated jitter draws between base and 3 × previous (previous defaults to base)', () => {
    const b = new Backoff({ strategy: 'decorrelated_jitter', baseMs: 100, capMs: 10_000 }, fixed(0.5));
    expect(b.delayMs(1)).toBe(200); // 100 + 0.5·(300 − 100)
    expect(b.delayMs(2, 1_000)).toBe(1_550); // 100 + 0.5·(3000 − 100)
    expect(b.delayMs(2, 10)).toBe(200); // a previous below base counts as base
    expect(b.delayMs(9, 9_000)).toBe(10_000); // capped
  });

  it('is deterministic for a seed', () => {
    const run = () => {
      const b = new Backoff({}, new SeededRandom('backoff'));
      return [1, 2, 3, 4].map((n) => b.delayMs(n));
    };
    expect(run()).toEqual(run());
  });
});

describe('planRetry', () => {
  it('waits the backoff when there is no retry-after', () => {
    expect(planRetry({ backoffMs: 200, now: 1_000, deadlineAt: 5_000, minAttemptMs: 100 })).toEqual({
      ok: true,
      delayMs: 200,
    });
  });

  it('takes retry-after as a lower bound', () => {
    expect(planRetry({ backoffMs: 200, retryAfterMs: 1_500, now: 0, deadlineAt: 10_000, minAttemptMs: 100 })).toEqual({
      ok: true,
      delayMs: 1_500,
    });
    expect(planRetry({ backoffMs: 800, retryAfterMs: 300, now: 0, deadlineAt: 10_000, minAttemptMs: 100 })).toEqual({
      ok: true,
      delayMs: 800,
    });
    expect(planRetry({ backoffMs: 800, retryAfterMs: NaN, now: 0, deadlineAt: 10_000, minAttemptMs: 0 })).toEqual({
      ok: true,
      delayMs: 800,
    });
  });

  it('fails fast when the wait plus a minimal attempt would pass the deadline', () => {
    expect(planRetry({ backoffMs: 200, retryAfterMs: 30_000, now: 0, deadlineAt: 10_000, minAttemptMs: 100 })).toEqual({
      ok: false,
      reason: 'deadline',
      wouldWaitMs: 30_000,
    });
    expect(planRetry({ backoffMs: 950, now: 0, deadlineAt: 1_000, minAttemptMs: 100 })).toEqual({
      ok: false,
      reason: 'deadline',
      wouldWaitMs: 950,
    });
  });

  it('allows a retry that fits exactly', () => {
    expect(planRetry({ backoffMs: 900, now: 0, deadlineAt: 1_000, minAttemptMs: 100 })).toEqual({
      ok: true,
      delayMs: 900,
    });
  });

  it('never fails against no deadline', () => {
    expect(planRetry({ backoffMs: 1e9, retryAfterMs: 1e12, now: 5, deadlineAt: Infinity, minAttemptMs: 1e6 })).toEqual({
      ok: true,
      delayMs: 1e12,
    });
  });

  it('ok ⇔ now + max(backoff, retryAfter) + minAttempt ≤ deadline, and the delay is never below either', () => {
    const ms = fc.integer({ min: 0, max: 100_000 });
    fc.assert(
      fc.property(
        ms,
        fc.option(ms, { nil: undefined }),
        ms,
        ms,
        ms,
        (backoffMs, retryAfterMs, now, budget, minAttemptMs) => {
          const plan = planRetry({ backoffMs, retryAfterMs, now, deadlineAt: now + budget, minAttemptMs });
          const delay = plan.ok ? plan.delayMs : plan.wouldWaitMs;
          return (
            delay === Math.max(backoffMs, retryAfterMs ?? 0) && plan.ok === now + delay + minAttemptMs <= now + budget
          );
        },
      ),
    );
  });
});
