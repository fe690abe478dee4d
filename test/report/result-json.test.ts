import { beforeAll, describe, expect, it } from 'vitest';
import { RESULT_SCHEMA, type ResultFile } from '../../src/run/metrics/result.js';
import { resultJson } from '../../src/report/result-json.js';
import { fakeFile, fakeRun } from './fixture.js';

beforeAll(async () => {});

describe('resultJson', () => {
  it('gives the same bytes for the same input, twice', () => {
    const a = resultJson(
      fakeFile([
        fakeRun('naive', { roots: 300, leafAttempts: 27, okShare: 0 }),
        fakeRun('engine', { roots: 300, leafAttempts: 1, okShare: 0.9, shed: true }),
      ]),
    );
    const b = resultJson(
      fakeFile([
        fakeRun('naive', { roots: 300, leafAttempts: 27, okShare: 0 }),
        fakeRun('engine', { roots: 300, leafAttempts: 1, okShare: 0.9, shed: true }),
      ]),
    );
    expect(a).toBe(b);
    expect(a.endsWith('}\n')).toBe(true);
    expect(
      a.startsWith(
        `{\n  "schema": "${RESULT_SCHEMA}",\n  "scenario": "retry-storm",\n  "seed": 42,\n  "mode": "sim",\n  "variants": [`,
      ),
    ).toBe(true);
  });

  it('writes keys in canonical order whatever order they were built in', () => {
    const file = fakeFile([fakeRun('x', { roots: 50, leafAttempts: 2, okShare: 0.5 })]);
    const shuffled = JSON.parse(JSON.stringify(file), function (this: unknown, _k, v: unknown) {
      if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
      return Object.fromEntries(Object.entries(v).reverse());
    }) as ResultFile;
    expect(Object.keys(shuffled)[0]).toBe('timing');
    expect(resultJson(shuffled)).toBe(resultJson(file));
  });

  it('round-trips through JSON.parse, floats rounded to 6 significant digits', () => {
    const file = fakeFile([fakeRun('x', { roots: 30, leafAttempts: 3, okShare: 1 / 3 })]);
    file.variants[0].successRate = 1 / 3;
    file.timing.wallMs = 0.1 + 0.2;
    const text = resultJson(file);
    const back = JSON.parse(text) as ResultFile;
    expect(back.variants[0].successRate).toBe(0.333333);
    expect(back.timing.wallMs).toBe(0.3);
    expect(back.variants[0].series.offered.length).toBe(20);
    expect(text).toMatch(/^ {8}"offered": \[\d+(, \d+){19}\],$/m); // series arrays on one line
    expect(back.variants[0].layers.map((l) => l.name)).toEqual(['orchestrator', 'agent', 'llm']);
    expect(text).toContain('  "timing": {\n    "wallMs": 0.3,\n    "attemptsPerSec": 1234567\n  }\n}\n');
  });

  it('writes statuses ascending, then reset and timeout', () => {
    const file = fakeFile([fakeRun('x', { roots: 10, leafAttempts: 2, okShare: 1 })]);
    file.variants[0].upstream.status = { timeout: 1, 529: 2, reset: 3, 200: 4 };
    const text = resultJson(file);
    const block = text.slice(text.indexOf('"status": {'), text.indexOf('}', text.indexOf('"status": {')));
    expect(block.replace(/\s+/g, ' ')).toBe('"status": { "200": 4, "529": 2, "reset": 3, "timeout": 1 ');
  });
});
