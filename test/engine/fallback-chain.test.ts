import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { FallbackChain, type FallbackTarget } from '../../src/engine/fallback-chain.js';
import { OptionError } from '../../src/engine/errors.js';

/** A target that is down over [downFrom, downUntil). */
function target(name: string, downFrom = Infinity, downUntil = Infinity): FallbackTarget<string> {
  return { name, value: `model-${name}`, available: (now) => now < downFrom || now >= downUntil };
}

describe('FallbackChain', () => {
  it('walks the targets in order and ends with -1', () => {
    const chain = new FallbackChain([target('a'), target('b'), { name: 'c', value: 'model-c' }]);
    expect(chain.first(0)).toBe(0);
    expect(chain.next(0, 0)).toBe(1);
    expect(chain.next(1, 0)).toBe(2);
    expect(chain.next(2, 0)).toBe(-1);
    expect(chain.targets.map((t) => t.value)).toEqual(['model-a', 'model-b', 'model-c']);
  });

  it('skips unavailable targets, as of the time asked', () => {
    const chain = new FallbackChain([target('primary', 100, 200), target('second', 150, 300), target('third')]);
    expect(chain.first(50)).toBe(0);
    expect(chain.first(120)).toBe(1);
    expect(chain.first(160)).toBe(2);
    expect(chain.next(0, 160)).toBe(2);
    expect(chain.first(250)).toBe(0);
    expect(chain.next(0, 250)).toBe(2);
  });

  it('returns -1 when nothing is available', () => {
    const chain = new FallbackChain([target('a', 0), target('b', 0)]);
    expect(chain.first(10)).toBe(-1);
    expect(chain.next(0, 10)).toBe(-1);
  });

  it('marks every target but the primary as degraded', () => {
    const chain = new FallbackChain([target('a'), target('b'), target('c')]);
    expect(chain.isDegraded(0)).toBe(false);
    expect(chain.isDegraded(1)).toBe(true);
    expect(chain.isDegraded(2)).toBe(true);
  });

  it('asks availability with the given now, and only until it finds one', () => {
    const asked: string[] = [];
    const spy = (name: string, up: boolean): FallbackTarget<number> => ({
      name,
      value: 0,
      available: (now) => (asked.push(`${name}@${now}`), up),
    });
    const chain = new FallbackChain([spy('a', false), spy('b', true), spy('c', true)]);
    expect(chain.first(42)).toBe(1);
    expect(asked).toEqual(['a@42', 'b@42']);
  });

  it('copies and freezes its targets', () => {
    const input = [target('a'), target('b')];
    const chain = new FallbackChain(input);
    input.pop();
    input[0].name = 'changed';
    expect(chain.targets.map((t) => t.name)).toEqual(['a', 'b']);
    expect(Object.isFrozen(chain.targets)).toBe(true);
    expect(Object.isFrozen(chain.targets[0])).toBe(true);
  });

  it('next(i) is the smallest available index above i (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: -1, max: 8 }),
        (ups, after) => {
          const chain = new FallbackChain(ups.map((up, i) => ({ name: `t${i}`, value: i, available: () => up })));
          const expected = ups.findIndex((up, i) => up && i > after);
          expect(chain.next(after, 0)).toBe(expected);
          expect(chain.first(0)).toBe(ups.indexOf(true));
        },
      ),
    );
  });

  it('validates its targets', () => {
    expect(() => new FallbackChain([])).toThrow(OptionError);
    expect(() => new FallbackChain([])).toThrow('fallbackChain.targets must be a non-empty array, got []');
    expect(() => new FallbackChain(undefined as never)).toThrow(
      'fallbackChain.targets must be a non-empty array, got undefined',
    );
    expect(() => new FallbackChain([target('a'), target('a')])).toThrow(
      'fallbackChain.targets[1].name must be unique, got "a" twice',
    );
    expect(() => new FallbackChain([target('a'), { name: '', value: 'x' }])).toThrow(
      'fallbackChain.targets[1].name must be a non-empty string, got ""',
    );
    expect(() => new FallbackChain([{ name: 'a', value: 1, available: true as never }])).toThrow(
      'fallbackChain.targets[0].available must be a function, got boolean',
    );
  });
});
