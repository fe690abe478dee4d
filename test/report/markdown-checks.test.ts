import { describe, expect, it } from 'vitest';
import type { Check } from '../../src/report/check.js';
import { markdownChecks } from '../../src/report/markdown-checks.js';

const pass: Check = {
  name: 'amplification < 1.5',
  group: 'engine',
  status: 'pass',
  actual: '1.07×',
  expected: '< 1.5',
};
const fail: Check = {
  name: 'amplification < 1.5',
  group: 'naive',
  status: 'fail',
  actual: '27.0×',
  expected: '< 1.5',
  message: 'way over',
};
const skip: Check = {
  name: 'live.maxPending < 10',
  group: 'engine',
  status: 'skip',
  actual: '',
  expected: '< 10',
  message: 'live runs only',
};

/** The cells of a Markdown table row, split on pipes that are not escaped. */
function cells(row: string): string[] {
  const out: string[] = [];
  let cell = '';
  for (let i = 1; i < row.length - 1; i++) {
    if (row[i] === '\\' && row[i + 1] === '|') {
      cell += '\\|';
      i++;
    } else if (row[i] === '|') {
      out.push(cell.trim());
      cell = '';
    } else cell += row[i];
  }
  out.push(cell.trim());
  return out;
}

describe('markdownChecks', () => {
  it('a heading with the verdict, a blank line, a header row, a separator and one row per check', () => {
    const text = markdownChecks('stormlab retry-storm', [fail, pass]);
    const lines = text.split('\n');
    expect(lines[0]).toBe('### stormlab retry-storm: ❌ 1 of 2 failed');
    expect(lines[1]).toBe('');
    expect(cells(lines[2])).toEqual(['', 'check', 'variant', 'actual', 'expected', 'note']);
    expect(lines[3]).toBe('|---|---|---|---|---|---|');
    expect(cells(lines[4])).toEqual(['❌ failed', '`amplification < 1.5`', 'naive', '27.0×', '< 1.5', 'way over']);
    expect(cells(lines[5])).toEqual(['✅ held', '`amplification < 1.5`', 'engine', '1.07×', '< 1.5', '']);
    expect(text.endsWith('|\n')).toBe(true);
    expect(lines.length).toBe(7);
  });

  it('verdicts: all held; held with skips; nothing judged is not "held"', () => {
    expect(markdownChecks('t', [pass, pass]).split('\n')[0]).toBe('### t: ✅ all expectations held');
    expect(markdownChecks('t', [pass, skip]).split('\n')[0]).toBe('### t: ✅ 1 held, 1 skipped');
    expect(markdownChecks('t', [skip, skip]).split('\n')[0]).toBe('### t: ⏭️ none could be judged, 2 skipped');
    expect(markdownChecks('t', [fail, skip]).split('\n')[0]).toBe('### t: ❌ 1 of 2 failed');
  });

  it('a skipped check shows — for its missing figure and its reason', () => {
    expect(cells(markdownChecks('t', [skip]).split('\n')[4])).toEqual([
      '⏭️ skipped',
      '`live.maxPending < 10`',
      'engine',
      '—',
      '< 10',
      'live runs only',
    ]);
  });

  it('keeps every row to six cells: pipes escaped, line breaks flattened', () => {
    const nasty: Check = {
      name: 'a | b',
      group: 'x|y',
      status: 'fail',
      actual: '1 | 2',
      expected: '< 3',
      message: 'line one\nline two\r\nthree',
    };
    const row = markdownChecks('t | u', [nasty]).split('\n');
    expect(row[0]).toBe('### t \\| u: ❌ 1 of 1 failed');
    expect(cells(row[4])).toEqual(['❌ failed', '`a \\| b`', 'x\\|y', '1 \\| 2', '< 3', 'line one line two three']);
  });

  it('a name with backticks stays one code span', () => {
    const row = markdownChecks('t', [{ ...pass, name: 'a `b` c' }]).split('\n')[4];
    expect(cells(row)[1]).toBe('``a `b` c``');
    expect(cells(markdownChecks('t', [{ ...pass, name: '`x`' }]).split('\n')[4])[1]).toBe('`` `x` ``');
  });

  it('no checks: says so, no table', () => {
    expect(markdownChecks('t', [])).toBe('### t: ✅ all expectations held\n\n_No expectations were given._\n');
  });
});
