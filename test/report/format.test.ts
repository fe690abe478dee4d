import { describe, expect, it } from 'vitest';
import {
  formatCount,
  formatFigure,
  formatMs,
  formatPercent,
  formatRate,
  formatTimes,
  sig3,
  withCommas,
  type FigureUnit,
} from '../../src/report/format.js';

describe('format', () => {
  it('writes counts with commas, then k/M', () => {
    expect([0, 7, 1234, 9999, 12_345, 123_456, 999_700, 1_234_567, 2.7e9].map(formatCount)).toEqual([
      '0',
      '7',
      '1,234',
      '9,999',
      '12.3k',
      '123k',
      '1.00M',
      '1.23M',
      '2.70G',
    ]);
    expect(withCommas(-1234567)).toBe('-1,234,567');
  });

  it('keeps three significant digits, carrying into the next decade', () => {
    expect([0, 1.08, 9.996, 27, 99.97, 123.4, 999.7].map(sig3)).toEqual([
      '0.00',
      '1.08',
      '10.0',
      '27.0',
      '100',
      '123',
      '1.00k',
    ]);
    expect(sig3(Number.NaN)).toBe('—');
  });

  it('writes multipliers, rates, percentages and durations', () => {
    expect([27, 1.08, 1.5].map(formatTimes)).toEqual(['27.0×', '1.08×', '1.50×']);
    expect([0.0030556, 0.00001, 0].map(formatTimes)).toEqual(['0.0031×', '0.00001×', '0.00×']);
    expect([0, 12.34, 4321].map(formatRate)).toEqual(['0.00/s', '12.3/s', '4.32k/s']);
    expect([0, 0.951, 1, 0.0002, 0.99996].map(formatPercent)).toEqual([
      '0.0 %',
      '95.1 %',
      '100.0 %',
      '<0.1 %',
      '>99.9 %',
    ]);
    expect([0, 850, 999.4, 1234, 12_345, 150_000].map(formatMs)).toEqual([
      '0 ms',
      '850 ms',
      '999 ms',
      '1.23 s',
      '12.3 s',
      '2.50 min',
    ]);
  });
});

describe('formatFigure', () => {
  it('reads a figure by its unit, with never for an infinite duration and — for none', () => {
    expect(
      ['times', 'rate', 'share', 'ms', 'count', 'tokens'].map((u) => formatFigure(u as FigureUnit, 1234.5)),
    ).toEqual(['1.23k×', '1.23k/s', '123450.0 %', '1.23 s', '1,235', '1,235']);
    expect(formatFigure('ms', Infinity)).toBe('never');
    expect(formatFigure('times', null)).toBe('—');
  });
});
