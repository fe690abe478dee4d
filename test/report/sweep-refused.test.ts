import { describe, expect, it } from 'vitest';
import { sweepPointsTable } from '../../src/report/html/sweep-points-table.js';
import { sweepReport } from '../../src/report/html/sweep-report.js';
import { refusedLine } from '../../src/report/refused-line.js';
import { readReportInput } from '../../src/report/report-input.js';
import type { SweepFile } from '../../src/report/sweep-file.js';
import { fakeSweep } from './sweep-fixture.js';

/** A 2 × 2 sweep whose cell k=2, r=0.1 was refused: three points and one refused cell. */
function withRefused(): SweepFile {
  const file = fakeSweep({
    params: [
      { path: 'k', values: [1, 2] },
      { path: 'r', values: [0.1, 0.2] },
    ],
  });
  return {
    ...file,
    points: file.points.filter((p) => !(p.values[0] === 2 && p.values[1] === 0.1)),
    refused: [{ values: [2, 0.1], reason: 'engine: breaker.maxOpenMs must be a number >= 60000, got 30000' }],
  };
}

describe('a sweep file with refused cells', () => {
  it('reads back as written; older files without the field still read', () => {
    const file = withRefused();
    expect(readReportInput(JSON.stringify(file), 's.json')).toEqual({ ok: true, input: { kind: 'sweep', file } });
    const { refused: _, ...old } = file;
    expect(readReportInput(JSON.stringify(old), 's.json').ok).toBe(true);
  });

  it('checks a refused cell sits on the grid and says why', () => {
    const off = { ...withRefused(), refused: [{ values: [3, 0.1], reason: 'x' }] };
    const r = readReportInput(JSON.stringify(off), 's.json');
    expect(r.ok).toBe(false);
    expect(!r.ok && r.problem).toContain('refused[0].values[0]');
    const noReason = { ...withRefused(), refused: [{ values: [2, 0.1] }] };
    expect(readReportInput(JSON.stringify(noReason), 's.json').ok).toBe(false);
  });

  it("is counted in stormlab report's table and the HTML header", () => {
    const text = sweepPointsTable(withRefused());
    expect(text.split('\n')[0]).toContain(' · 4 points (1 refused) · ');
    expect(text).toContain(
      '\n1 of 4 points skipped because their values are refused, e.g. k=2 r=0.1: engine: breaker.maxOpenMs must be a number >= 60000, got 30000\n',
    );
    expect(sweepReport(withRefused()).body).toContain('4 points (1 refused)');
  });
});

describe('refusedLine', () => {
  it('counts the skipped points with an example, or says every point was refused', () => {
    expect(refusedLine(3, 61, { point: 'a=1 b=2', reason: 'engine: x' })).toBe(
      '3 of 61 points skipped because their values are refused, e.g. a=1 b=2: engine: x',
    );
    expect(refusedLine(4, 4, { point: 'a=1', reason: 'engine: x' })).toBe(
      'every one of the 4 points is refused, e.g. a=1: engine: x',
    );
    expect(refusedLine(1, 1, { point: 'a=1', reason: 'engine: x' })).toBe('the only point is refused: engine: x');
  });
});
