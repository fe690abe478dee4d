import { describe, expect, it } from 'vitest';
import { diffMetrics } from '../../src/gate/diff-metrics.js';
import {
  checkToleranceNames,
  describeTolerance,
  parseTolerances,
  toleranceFor,
} from '../../src/gate/diff-tolerance.js';
import { GateError } from '../../src/gate/gate-error.js';

const METRICS = diffMetrics(['orchestrator', 'agent', 'llm']);
const metric = (name: string) => METRICS.find((m) => m.name === name)!;

function problem(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(GateError);
    return (e as Error).message;
  }
  throw new Error('expected a GateError');
}

describe('parseTolerances', () => {
  it('defaults to 5 % and reads 5%, 0.05, 2.5 %, 0 and 150%', () => {
    expect(parseTolerances([])).toEqual({ default: 0.05, metrics: {} });
    expect(parseTolerances(['10%']).default).toBeCloseTo(0.1, 12);
    expect(parseTolerances(['0.05']).default).toBe(0.05);
    expect(parseTolerances(['2.5 %']).default).toBeCloseTo(0.025, 12);
    expect(parseTolerances(['0']).default).toBe(0);
    expect(parseTolerances(['150%']).default).toBeCloseTo(1.5, 12);
  });

  it('reads metric=share, repeatable; a later flag for the same name wins', () => {
    const t = parseTolerances(['5%', 'amplification=2%', 'p99=10%', 'amplification=0.03']);
    expect(t).toEqual({ default: 0.05, metrics: { amplification: 0.03, p99: 0.1 } });
  });

  it("takes the gate's long names for the same metrics", () => {
    const t = parseTolerances([
      'layers.llm.latencyMs.p99=1%',
      'roots.latency.p99=2%',
      'recoveryMs=20%',
      'upstream.wastedTokens=50%',
    ]);
    expect(Object.keys(t.metrics)).toEqual(['layers.llm.p99', 'roots.p99', 'recovery', 'wastedTokens']);
  });

  it.each([
    ['abc', '--tolerance "abc": expected a share like 5% or 0.05, or metric=share like amplification=2%'],
    ['5', '--tolerance "5": a bare number is a share from 0 to 1; write 5% for 5 percent'],
    ['-5%', '--tolerance "-5%": expected a share like 5% or 0.05, or metric=share like amplification=2%'],
    ['5%%', '--tolerance "5%%": expected a share like 5% or 0.05, or metric=share like amplification=2%'],
    [
      'amplification=',
      '--tolerance "amplification=": expected a share like 5% or 0.05, or metric=share like amplification=2%',
    ],
    ['=5%', '--tolerance "=5%": expected metric=share, the metric is empty'],
  ])('refuses %s with one line naming the flag', (flag, message) => {
    expect(problem(() => parseTolerances([flag]))).toBe(message);
  });
});

describe('checkToleranceNames', () => {
  it('accepts the families and every compared metric', () => {
    expect(() =>
      checkToleranceNames(
        parseTolerances([
          'amplification=1%',
          'goodput=1%',
          'successRate=1%',
          'p99=1%',
          'roots.p99=1%',
          'layers.agent.p99=1%',
          'wastedTokens=1%',
          'recovery=1%',
        ]),
        METRICS,
      ),
    ).not.toThrow();
  });

  it('refuses an unknown name with a did-you-mean and the list', () => {
    const m = problem(() => checkToleranceNames(parseTolerances(['amplificaton=2%']), METRICS));
    expect(m).toBe(
      '--tolerance: unknown metric "amplificaton" (did you mean amplification?); metrics: amplification, goodput, successRate, p99, wastedTokens, recovery, roots.p99, layers.orchestrator.p99, layers.agent.p99, layers.llm.p99',
    );
    expect(problem(() => checkToleranceNames(parseTolerances(['layers.lm.p99=2%']), METRICS))).toMatch(
      /^--tolerance: unknown metric "layers.lm.p99" \(did you mean layers.llm.p99\?\)/,
    );
    expect(problem(() => checkToleranceNames(parseTolerances(['zzz=2%']), METRICS))).toMatch(
      /^--tolerance: unknown metric "zzz"; metrics: /,
    );
  });
});

describe('toleranceFor and describeTolerance', () => {
  it("a metric's own, else its family's, else the default", () => {
    const t = parseTolerances(['1%', 'p99=10%', 'layers.llm.p99=20%']);
    expect(toleranceFor(t, metric('layers.llm.p99'))).toBeCloseTo(0.2, 12);
    expect(toleranceFor(t, metric('layers.agent.p99'))).toBeCloseTo(0.1, 12);
    expect(toleranceFor(t, metric('roots.p99'))).toBeCloseTo(0.1, 12);
    expect(toleranceFor(t, metric('goodput'))).toBeCloseTo(0.01, 12);
    expect(describeTolerance(t)).toBe('1 % (p99 10 %, layers.llm.p99 20 %)');
    expect(describeTolerance(parseTolerances(['2.5%']))).toBe('2.5 %');
  });
});
