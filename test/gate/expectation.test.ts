import { beforeAll, describe, expect, it } from 'vitest';
import { evaluateExpectations } from '../../src/gate/evaluate-expectations.js';
import { holds, parseExpectation, type Op } from '../../src/gate/expectation.js';
import { GateError } from '../../src/gate/gate-error.js';
import { MetricCatalog } from '../../src/gate/metric-catalog.js';
import type { RunResult } from '../../src/run/metrics/result.js';
import { fakeFile, fakeRun } from '../report/fixture.js';

const catalog = new MetricCatalog(['orchestrator', 'agent', 'llm'], ['primary']);
const VARIANTS = ['naive', 'engine'];
const parse = (text: string) => parseExpectation(text, catalog, VARIANTS);

describe('parseExpectation', () => {
  it.each([
    ['amplification < 1.5', 'amplification', '<', 1.5],
    ['amplification<=1.5x', 'amplification', '<=', 1.5],
    ['amplification < 2×', 'amplification', '<', 2],
    ['goodput > 0.95', 'goodput', '>', 0.95],
    ['goodput >= 12/s', 'goodput', '>=', 12],
    ['successRate > 95%', 'successRate', '>', 0.95],
    ['successRate >= 0.9', 'successRate', '>=', 0.9],
    ['layers.llm.p99 < 20s', 'layers.llm.latencyMs.p99', '<', 20_000],
    ['recovery < 1m30s', 'recoveryMs', '<', 90_000],
    ['recovery <= 2min', 'recoveryMs', '<=', 120_000],
    ['p99 < 800ms', 'roots.latencyMs.p99', '<', 800],
    ['shed.budget share < 0.2', 'shed.budget share', '<', 0.2],
    ['wastedTokens < 12k', 'upstream.wastedTokens', '<', 12_000],
    ['upstream.status.503 == 0', 'upstream.status.503', '==', 0],
    ['roots.failed = 0', 'roots.failed', '==', 0],
    ['upstream.attempts != 1.5M', 'upstream.attempts', '!=', 1_500_000],
  ])('%s', (text, metric, op, threshold) => {
    const e = parse(text);
    expect([e.metric.name, e.op, e.threshold, e.variant]).toEqual([metric, op, threshold, undefined]);
  });

  it('takes a variant prefix, and keeps the text and threshold as written', () => {
    const e = parse('  variants.engine.layers.llm.p99 < 20s ');
    expect(e).toMatchObject({ variant: 'engine', text: 'variants.engine.layers.llm.p99 < 20s', thresholdText: '20s' });
    expect(e.metric.name).toBe('layers.llm.latencyMs.p99');
  });

  it.each([
    ['', 'expected <metric> <op> <value> like "amplification < 1.5", got ""'],
    ['amplification', 'expected <metric> <op> <value> like "amplification < 1.5", got "amplification"'],
    ['< 1.5', 'expected <metric> <op> <value> like "amplification < 1.5", got "< 1.5"'],
    ['amplification <', 'expected a value after < in "amplification <"'],
    ['amplificaton < 1.5', 'unknown metric "amplificaton" (did you mean amplification?)'],
    ['variants.engin.amplification < 1.5', 'unknown variant "engin" (did you mean engine?); variants: naive, engine'],
    ['variants.engine < 1.5', 'expected variants.<name>.<metric>, got "variants.engine"'],
    ['amplification < lots', '"lots" does not fit amplification: amplification is a multiplier: write 1.5 or 1.5x'],
    [
      'amplification < 150%',
      '"150%" does not fit amplification (unit "%"): amplification is a multiplier: write 1.5 or 1.5x',
    ],
    ['recovery < 30', '"30" does not fit recovery (no unit): recovery is a duration: write 20s, 500ms or 2m'],
    ['recovery < soon', '"soon" does not fit recovery: recovery is a duration: write 20s, 500ms or 2m'],
    [
      'successRate > 95',
      '"95" does not fit successRate (a share is 0 to 1): successRate is a share from 0 to 1: write 0.95 or 95%',
    ],
    [
      'goodput > 95%',
      '"95%" does not fit goodput (goodput is root tasks ok within their deadline per second; their share of those offered is successRate, e.g. successRate > 95%): goodput is a rate per second: write 12 or 12/s',
    ],
    [
      'wastedTokens < 5 tokens',
      '"5 tokens" does not fit wastedTokens (unit "tokens"): wastedTokens is a token count: write 50000, 50k or 1.5M',
    ],
  ])('refuses %j', (text, message) => {
    expect(() => parse(text)).toThrow(new GateError(message));
  });
});

describe('holds', () => {
  it.each<[number, Op, number, boolean]>([
    [1, '<', 2, true],
    [2, '<', 2, false],
    [2, '<=', 2, true],
    [3, '<=', 2, false],
    [3, '>', 2, true],
    [2, '>', 2, false],
    [2, '>=', 2, true],
    [1, '>=', 2, false],
    [2, '==', 2, true],
    [1, '==', 2, false],
    [1, '!=', 2, true],
    [2, '!=', 2, false],
    [Infinity, '<', 30_000, false],
    [Infinity, '>', 30_000, true],
  ])('%d %s %d is %s', (a, op, b, want) => {
    expect(holds(a, op, b)).toBe(want);
  });
});

describe('evaluateExpectations', () => {
  let naive: RunResult;
  let engine: RunResult;
  beforeAll(async () => {
    naive = fakeRun('naive', { roots: 100, leafAttempts: 27, okShare: 0.2 });
    engine = fakeRun('engine', { roots: 100, leafAttempts: 1, okShare: 0.95 });
  });

  it('judges a bare expectation on every variant, a prefixed one on its variant only', () => {
    const checks = evaluateExpectations(
      [parse('amplification < 1.5'), parse('variants.engine.successRate >= 95%')],
      fakeFile([naive, engine]),
    );
    expect(checks.map((c) => [c.group, c.name, c.status, c.actual, c.expected])).toEqual([
      ['naive', 'amplification < 1.5', 'fail', '27.0×', '< 1.5'],
      ['engine', 'amplification < 1.5', 'pass', '1.00×', '< 1.5'],
      ['engine', 'variants.engine.successRate >= 95%', 'pass', '95.0 %', '>= 95%'],
    ]);
  });

  it('skips, not passes, what it cannot judge: a variant not run, a figure the run lacks', () => {
    const checks = evaluateExpectations(
      [parse('variants.naive.amplification > 20'), parse('live.requestErrors == 0')],
      fakeFile([engine]),
    );
    expect(checks).toEqual([
      expect.objectContaining({
        group: 'naive',
        status: 'skip',
        message: 'variant naive was not run (compare runs every variant; run takes --variant naive)',
      }),
      expect.objectContaining({
        group: 'engine',
        status: 'skip',
        message: "live.requestErrors is not in this run's result (live runs only)",
      }),
    ]);
  });

  it('fails, not passes, every expectation on a run no root task arrived in (its figures read 0)', () => {
    const none = fakeRun('engine', { roots: 0, leafAttempts: 0, okShare: 0 });
    const checks = evaluateExpectations([parse('amplification < 2'), parse('successRate < 1')], fakeFile([none]));
    expect(checks.map((c) => [c.status, c.actual, c.message])).toEqual([
      ['fail', '', 'no root task arrived, so nothing was measured: it cannot hold'],
      ['fail', '', 'no root task arrived, so nothing was measured: it cannot hold'],
    ]);
    expect(evaluateExpectations([parse('amplification < 2')], fakeFile([engine]))[0].status).toBe('pass');
  });

  it('reads a run that never recovered as "never": later than any bound', () => {
    const run = { ...engine, recoveryMs: null };
    const [lt, gt] = evaluateExpectations([parse('recovery < 30s'), parse('recovery > 30s')], fakeFile([run]));
    expect([lt.status, lt.actual, gt.status]).toEqual(['fail', 'never', 'pass']);
  });

  it('compares the figure as the result JSON rounds it, so a saved result judges the same', () => {
    const run = { ...engine, amplification: 1.4999999999 };
    expect(evaluateExpectations([parse('amplification < 1.5')], fakeFile([run]))[0].status).toBe('fail');
    expect(evaluateExpectations([parse('amplification == 1.5')], fakeFile([run]))[0].status).toBe('pass');
  });
});
