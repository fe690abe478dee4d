import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../src/scenario/duration.js';

describe('parseDuration', () => {
  it('reads numbers as ms and strings with units', () => {
    expect(parseDuration(250)).toBe(250);
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('2s')).toBe(2_000);
    expect(parseDuration('1.5m')).toBe(90_000);
    expect(parseDuration('1h')).toBe(3_600_000);
    expect(parseDuration('1m30s')).toBe(90_000);
    expect(parseDuration(' 750 ')).toBe(750);
    expect(parseDuration('.5s')).toBe(500);
    expect(parseDuration(0)).toBe(0);
  });

  it('refuses anything else', () => {
    for (const bad of [
      'soon',
      '',
      '5 s',
      '5x',
      '-1s',
      's',
      '1.2.3s',
      '10sms',
      null,
      undefined,
      true,
      {},
      [],
      -5,
      NaN,
      Infinity,
    ]) {
      expect(parseDuration(bad), String(bad)).toBeUndefined();
    }
  });
});

describe('formatDuration', () => {
  it('writes the shortest exact form', () => {
    expect(formatDuration(120_000)).toBe('2m');
    expect(formatDuration(1_500)).toBe('1.5s');
    expect(formatDuration(7_200_000)).toBe('2h');
    expect(formatDuration(250)).toBe('250ms');
    expect(formatDuration(Infinity)).toBe('Infinity');
  });

  it('round-trips through parseDuration', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 1e9 }), (ms) => parseDuration(formatDuration(ms)) === ms));
  });
});

describe('formatDuration, a value found by a property run', () => {
  it('writes 531514590 ms so that it reads back exactly', () => {
    expect(parseDuration(formatDuration(531_514_590))).toBe(531_514_590);
  });
});
