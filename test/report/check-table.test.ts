import { describe, expect, it } from 'vitest';
import type { Check } from '../../src/report/check.js';
import { checkTable, verdict } from '../../src/report/check-table.js';

const checks: Check[] = [
  { name: 'amplification < 1.5', group: 'engine', status: 'pass', actual: '1.07×', expected: '< 1.5' },
  {
    name: 'amplification < 1.5',
    group: 'naive',
    status: 'fail',
    actual: '27.0×',
    expected: '< 1.5',
    message: 'amplification 27.0× is not < 1.5',
  },
  {
    name: 'live.maxPending < 10',
    group: 'engine',
    status: 'skip',
    actual: '',
    expected: '< 10',
    message: 'live runs only',
  },
];

describe('checkTable', () => {
  it('one line per check, columns aligned, reasons of failed and skipped checks below them, then the verdict', () => {
    expect(checkTable(checks)).toBe(
      [
        'held     engine  amplification < 1.5   1.07×  < 1.5',
        'FAILED   naive   amplification < 1.5   27.0×  < 1.5',
        '         amplification 27.0× is not < 1.5',
        'skipped  engine  live.maxPending < 10      —  < 10',
        '         live runs only',
        '1 of 3 checks failed, 1 skipped',
        '',
      ].join('\n'),
    );
  });

  it("a passing check's message is not shown; no trailing spaces when expected is empty", () => {
    const text = checkTable([{ name: 'x', group: 'g', status: 'pass', actual: '1', expected: '', message: 'fine' }]);
    expect(text).toBe('held  g  x  1\nall 1 check held\n');
  });

  it('colours the mark only, and only when asked', () => {
    expect(checkTable(checks)).not.toContain('\x1b');
    const coloured = checkTable(checks, { color: true }).split('\n');
    expect(coloured[0].startsWith('\x1b[32mheld   \x1b[0m  engine')).toBe(true);
    expect(coloured[1].startsWith('\x1b[31mFAILED \x1b[0m  naive')).toBe(true);
    expect(coloured[3].startsWith('\x1b[33mskipped\x1b[0m  engine')).toBe(true);
    // Without the escapes it is the plain table.
    expect(checkTable(checks, { color: true }).replace(/\x1b\[\d+m/g, '')).toBe(checkTable(checks));
  });

  it('no checks: one line saying so', () => {
    expect(checkTable([])).toBe('no expectations to check\n');
  });
});

describe('verdict', () => {
  const [pass, fail, skip] = checks;
  it.each([
    [[pass], 'all 1 check held'],
    [[pass, pass], 'all 2 checks held'],
    [[pass, skip], '1 check held, 1 skipped'],
    [[skip, skip], 'no check could be judged, 2 skipped'],
    [[fail], '1 of 1 check failed'],
    [[fail, fail, pass], '2 of 3 checks failed'],
  ] as const)('%#: %s', (list, text) => {
    expect(verdict(list)).toBe(text);
  });
});
