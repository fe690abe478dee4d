import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { parseRetryAfter } from '../../src/engine/retry-after.js';
import { header } from '../../src/engine/headers.js';

const NOW = Date.UTC(2015, 9, 21, 7, 28, 0); // Wed, 21 Oct 2015 07:28:00 GMT

describe('header', () => {
  it('reads plain objects case-insensitively, exact key first', () => {
    expect(header({ 'Retry-After': '2' }, 'retry-after')).toBe('2');
    expect(header({ 'RETRY-AFTER': '3' }, 'retry-after')).toBe('3');
    expect(header({ 'retry-after': '4', 'Retry-After': '5' }, 'retry-after')).toBe('4');
    expect(header({ 'retry-afte': '1' }, 'retry-after')).toBeUndefined();
  });

  it('reads WHATWG Headers', () => {
    const h = new Headers({ 'Retry-After': '7' });
    expect(header(h, 'retry-after')).toBe('7');
    expect(header(h, 'x-missing')).toBeUndefined();
  });

  it('takes the first value of arrays, stringifies numbers, ignores other values', () => {
    expect(header({ 'set-cookie': ['a', 'b'] }, 'set-cookie')).toBe('a');
    expect(header({ 'content-length': 12 }, 'content-length')).toBe('12');
    expect(header({ x: undefined }, 'x')).toBeUndefined();
    expect(header({ x: null } as never, 'x')).toBeUndefined();
    expect(header(undefined, 'x')).toBeUndefined();
  });

  it('does not read inherited properties', () => {
    expect(header({}, 'constructor')).toBeUndefined();
    expect(header({}, 'tostring')).toBeUndefined();
  });
});

describe('parseRetryAfter', () => {
  it('reads integer and decimal seconds', () => {
    expect(parseRetryAfter({ 'retry-after': '2' }, NOW)).toBe(2000);
    expect(parseRetryAfter({ 'retry-after': '0' }, NOW)).toBe(0);
    expect(parseRetryAfter({ 'retry-after': '1.5' }, NOW)).toBe(1500);
    expect(parseRetryAfter({ 'retry-after': ' 3 ' }, NOW)).toBe(3000);
    expect(parseRetryAfter({ 'retry-after': '.25' }, NOW)).toBe(250);
  });

  it('reads retry-after-ms as float milliseconds and prefers it over retry-after', () => {
    expect(parseRetryAfter({ 'retry-after-ms': '123.5' }, NOW)).toBe(123.5);
    expect(parseRetryAfter({ 'retry-after-ms': '250', 'retry-after': '10' }, NOW)).toBe(250);
    expect(parseRetryAfter(new Headers({ 'Retry-After-Ms': '40', 'Retry-After': '1' }), NOW)).toBe(40);
  });

  it('falls back to retry-after when retry-after-ms is garbage', () => {
    expect(parseRetryAfter({ 'retry-after-ms': 'soon', 'retry-after': '2' }, NOW)).toBe(2000);
  });

  it('resolves HTTP-dates against the given now (all three forms, always GMT)', () => {
    expect(parseRetryAfter({ 'retry-after': 'Wed, 21 Oct 2015 07:28:30 GMT' }, NOW)).toBe(30_000);
    expect(parseRetryAfter({ 'retry-after': 'Wednesday, 21-Oct-15 07:28:05 GMT' }, NOW)).toBe(5_000);
    // asctime has no zone: it must still be read as GMT, not local time.
    expect(parseRetryAfter({ 'retry-after': 'Wed Oct 21 07:29:00 2015' }, NOW)).toBe(60_000);
  });

  it('gives 0 for a date in the past', () => {
    expect(parseRetryAfter({ 'retry-after': 'Sun, 06 Nov 1994 08:49:37 GMT' }, NOW)).toBe(0);
  });

  it('cannot resolve a date without a finite now', () => {
    expect(parseRetryAfter({ 'retry-after': 'Wed, 21 Oct 2015 07:28:30 GMT' }, NaN)).toBeUndefined();
  });

  it('rejects negative, NaN, empty and garbage values', () => {
    for (const v of [
      '-1',
      'NaN',
      '',
      '   ',
      'soon',
      '1e3',
      '0x10',
      'Infinity',
      'hello 2020',
      '12abc',
      '1.2.3',
      'Wed, 99 Foo 2015 07:28:30 GMT',
    ]) {
      expect(parseRetryAfter({ 'retry-after': v }, NOW), v).toBeUndefined();
    }
    expect(parseRetryAfter({ 'retry-after-ms': '-5' }, NOW)).toBeUndefined();
    expect(parseRetryAfter({ 'retry-after': '9'.repeat(400) }, NOW)).toBeUndefined();
  });

  it('gives undefined without headers', () => {
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
    expect(parseRetryAfter({}, NOW)).toBeUndefined();
  });

  it('never throws and never returns a negative or non-finite number', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.integer({ min: 0, max: 4e12 }), (a, b, now) => {
        const ms = parseRetryAfter({ 'retry-after': a, 'retry-after-ms': b }, now);
        return ms === undefined || (Number.isFinite(ms) && ms >= 0);
      }),
    );
  });

  it('round-trips whole seconds', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 86_400 }),
        (s) => parseRetryAfter({ 'retry-after': String(s) }, NOW) === s * 1000,
      ),
    );
  });
});
