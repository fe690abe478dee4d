import { beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/run/metrics/result.js';
import { summaryTable } from '../../src/report/summary-table.js';
import { fakeFile, fakeRun } from './fixture.js';

const ANSI = /\x1b\[[0-9;]*m/;
let naive: RunResult;
let engine: RunResult;

beforeAll(async () => {
  naive = fakeRun('naive', { roots: 400, leafAttempts: 27, okShare: 0 });
  engine = fakeRun('engine', { roots: 400, leafAttempts: 1, okShare: 0.95, shed: true });
});

describe('summaryTable', () => {
  it('heads a single variant with amplification, goodput and success', () => {
    const out = summaryTable(fakeFile([naive]));
    expect(out.split('\n')[0]).toBe('amplification 27.0× · goodput 0.00/s · success 0.0 %');
  });

  it('heads several variants with their amplification side by side', () => {
    const out = summaryTable(fakeFile([naive, engine]));
    expect(out.split('\n')[0]).toContain('naive 27.0× · engine 1.00×');
    expect(out).toMatch(/^ +naive +engine$/m);
    expect(out).toMatch(/^amplification +27\.0× +1\.00×$/m);
    expect(out).toMatch(/^success rate +0\.0 % +95\.0 %$/m);
    expect(out).toMatch(/^upstream attempts +10\.8k +400$/m);
  });

  it('has every row the brief lists, per layer too', () => {
    const out = summaryTable(fakeFile([naive, engine]));
    for (const label of [
      'goodput',
      'root p50',
      'root p95',
      'root p99',
      '429 share',
      '5xx share',
      'wasted tokens',
      'layer orchestrator',
      'layer agent',
      'layer llm',
    ]) {
      expect(out).toContain(label);
    }
    expect(out.match(/^ {2}logical calls/gm)).toHaveLength(3);
    expect(out).toMatch(/^ {2}shed: throttle +0 +20$/m);
    expect(out).toMatch(/^ {2}shed: budget +0 +20$/m);
    expect(out).toContain('retry-storm · seed 42 · sim');
  });

  it('fits 80 columns for two variants', () => {
    const long = { ...engine, name: 'engine-with-a-rather-long-variant-name-that-goes-on' };
    for (const file of [fakeFile([naive, engine]), fakeFile([naive, long])]) {
      const lines = summaryTable(file).split('\n');
      for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
    }
  });

  it('splits many variants into blocks that fit the width', () => {
    const many = ['a-long-name-one', 'a-long-name-two', 'a-long-name-three', 'a-long-name-four'].map((name) => ({
      ...engine,
      name,
    }));
    const out = summaryTable(fakeFile(many), { width: 60 });
    for (const line of out.split('\n')) expect(line.length, line).toBeLessThanOrEqual(60);
    for (const v of many) expect(out).toContain(v.name);
  });

  it('has no ANSI escapes unless color is asked for', () => {
    expect(summaryTable(fakeFile([naive, engine]))).not.toMatch(ANSI);
    expect(summaryTable(fakeFile([naive, engine]), { color: false })).not.toMatch(ANSI);
    const colored = summaryTable(fakeFile([naive, engine]), { color: true });
    expect(colored).toContain('\x1b[31m 27.0×\x1b[0m'); // red: a storm
    expect(colored).toContain('\x1b[32m 1.00×\x1b[0m'); // green: the engine
    const visible = colored.split('\n').map((l) => l.replace(/\x1b\[[0-9;]*m/g, ''));
    expect(visible.join('\n')).toBe(summaryTable(fakeFile([naive, engine])));
  });

  it('says so when there are no variants', () => {
    expect(summaryTable(fakeFile([]))).toBe('no variants in this result\n');
  });
});
