import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { Deadline } from '../../src/engine/deadline.js';
import { OptionError } from '../../src/engine/errors.js';

describe('Deadline', () => {
  it('after(ms, now) ends at now + ms', () => {
    const d = Deadline.after(5_000, 1_000);
    expect(d.at).toBe(6_000);
    expect(d.remaining(1_000)).toBe(5_000);
    expect(d.remaining(5_500)).toBe(500);
  });

  it('remaining never goes negative; expired from `at` on', () => {
    const d = new Deadline(100);
    expect(d.remaining(250)).toBe(0);
    expect(d.expired(99)).toBe(false);
    expect(d.expired(100)).toBe(true);
    expect(d.expired(101)).toBe(true);
  });

  it('none() never expires and is shared', () => {
    const d = Deadline.none();
    expect(d.at).toBe(Infinity);
    expect(d.remaining(1e15)).toBe(Infinity);
    expect(d.expired(1e15)).toBe(false);
    expect(d.canStart(1e15, 1e9)).toBe(true);
    expect(Deadline.none()).toBe(d);
  });

  it('canStart refuses an attempt below the minimum remaining budget, and always once expired', () => {
    const d = new Deadline(1_000);
    expect(d.canStart(800, 200)).toBe(true);
    expect(d.canStart(801, 200)).toBe(false);
    expect(d.canStart(999, 0)).toBe(true);
    expect(d.canStart(1_000, 0)).toBe(false);
  });

  it('child takes a stage budget, capped by the parent', () => {
    const parent = new Deadline(10_000);
    expect(parent.child(2_000, 1_000).at).toBe(3_000);
    expect(parent.child(50_000, 1_000)).toBe(parent);
    expect(Deadline.none().child(2_000, 1_000).at).toBe(3_000);
  });

  it('fraction gives a share of what remains', () => {
    const parent = new Deadline(10_000);
    expect(parent.fraction(0.5, 2_000).at).toBe(6_000);
    expect(parent.fraction(1, 2_000)).toBe(parent);
    expect(Deadline.none().fraction(0.5, 0)).toBe(Deadline.none());
  });

  it('fraction of an expired deadline does not end after it', () => {
    const parent = new Deadline(1_000);
    expect(parent.fraction(0.5, 5_000).at).toBe(1_000);
  });

  it.each([
    [() => Deadline.after(-1, 0), /deadline\.ms must be a number >= 0, got -1/],
    [() => new Deadline(NaN), /deadline\.at must be a number, got NaN/],
    [() => new Deadline(0).child(-5, 0), /deadline\.budgetMs must be a number >= 0, got -5/],
    [() => new Deadline(0).fraction(0, 0), /deadline\.share must be a number > 0 and <= 1, got 0/],
    [() => new Deadline(0).fraction(1.5, 0), /deadline\.share must be a number > 0 and <= 1, got 1\.5/],
  ])('validates its arguments (%#)', (fn, message) => {
    expect(fn).toThrow(OptionError);
    expect(fn).toThrow(message);
  });

  it('a child never outlives its parent, and gets its budget when the parent allows', () => {
    const ms = fc.integer({ min: 0, max: 1e9 });
    fc.assert(
      fc.property(fc.option(ms, { nil: undefined }), ms, ms, (parentAt, budget, now) => {
        const parent = parentAt === undefined ? Deadline.none() : new Deadline(parentAt);
        const child = parent.child(budget, now);
        return (
          child.at <= parent.at &&
          child.at === Math.min(parent.at, now + budget) &&
          child.remaining(now) <= parent.remaining(now)
        );
      }),
    );
  });

  it('a fraction never outlives its parent, and a chain of fractions only shrinks', () => {
    const ms = fc.integer({ min: 0, max: 1e9 });
    const share = fc.double({ min: Number.MIN_VALUE, max: 1, noNaN: true });
    fc.assert(
      fc.property(ms, fc.array(fc.tuple(share, ms), { maxLength: 6 }), (at, steps) => {
        let d = new Deadline(at);
        for (const [s, now] of steps) {
          const next = d.fraction(s, now);
          if (next.at > d.at || next.remaining(now) > d.remaining(now)) return false;
          d = next;
        }
        return true;
      }),
    );
  });
});
