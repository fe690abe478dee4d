import { describe, expect, it } from 'vitest';
import type { Check } from '../../src/report/check.js';
import { compareResults, diffResults } from '../../src/gate/diff-results.js';
import { parseTolerances } from '../../src/gate/diff-tolerance.js';
import { file, variant, type Figures } from './diff-fixture.js';

const METRICS = [
  'amplification',
  'goodput',
  'successRate',
  'roots.p99',
  'layers.orchestrator.p99',
  'layers.agent.p99',
  'layers.llm.p99',
  'wastedTokens',
  'recovery',
];

/** The check of `metric` when one engine variant goes from `base` to `next` figures. */
function one(metric: string, base: Figures, next: Figures, ...tolerance: string[]): Check {
  const checks = diffResults(
    file([variant('engine', base)]),
    file([variant('engine', next)]),
    parseTolerances(tolerance),
  );
  const c = checks.find((x) => x.name === metric);
  expect(c, `a check named ${metric}`).toBeDefined();
  return c!;
}

const status = (metric: string, base: Figures, next: Figures, ...tolerance: string[]): Check['status'] =>
  one(metric, base, next, ...tolerance).status;

describe('diffResults: the same result twice', () => {
  it('holds every metric of every variant, in the base order, each "unchanged"', () => {
    const f = file([variant('naive', { amplification: 27 }), variant('engine')]);
    const checks = diffResults(f, f);
    expect(checks.map((c) => `${c.group} ${c.name}`)).toEqual([
      ...METRICS.map((m) => `naive ${m}`),
      ...METRICS.map((m) => `engine ${m}`),
    ]);
    expect(
      checks.every((c) => c.status === 'pass' && c.actual.endsWith('(unchanged)') && c.message === undefined),
    ).toBe(true);
  });
});

describe('diffResults: figures and their formats', () => {
  it('fills actual with the new figure and its change, expected with the limit and how it was made', () => {
    const c = one('amplification', { amplification: 0.99 }, { amplification: 1.0217 });
    expect(c).toMatchObject({ status: 'pass', actual: '1.02× (+3.2 %)', expected: '≤ 1.04× (base 0.99× +5 %)' });
  });

  it('says why a regression failed, with both figures and the tolerance', () => {
    const c = one('roots.p99', { p99: 1000 }, { p99: 1200 });
    expect(c).toMatchObject({ status: 'fail', actual: '1.20 s (+20.0 %)', expected: '≤ 1.05 s (base 1.00 s +5 %)' });
    expect(c.message).toBe('rose 20.0 % (1.00 s → 1.20 s), more than the 5 % tolerance allows');
  });

  it('marks an improvement beyond the tolerance "better" and passes it', () => {
    const c = one('goodput', { goodput: 10 }, { goodput: 12 });
    expect(c).toMatchObject({
      status: 'pass',
      actual: '12.0/s (+20.0 %, better)',
      expected: '≥ 9.50/s (base 10.0/s -5 %)',
    });
    const rows = compareResults(file([variant('e', { goodput: 10 })]), file([variant('e', { goodput: 12 })]));
    expect(rows.find((r) => r.check.name === 'goodput')!.verdict).toBe('improved');
    expect(rows.find((r) => r.check.name === 'amplification')!.verdict).toBe('steady');
  });

  it('writes a change of over 100 % as a count', () => {
    expect(one('amplification', { amplification: 1 }, { amplification: 27 }).actual).toBe('27.0× (+2,600 %)');
  });
});

describe('diffResults: tolerance edges, each direction', () => {
  it('lower is better (amplification): exactly +5 % holds, a hair more fails, less is fine', () => {
    expect(status('amplification', { amplification: 1 }, { amplification: 1.05 })).toBe('pass');
    expect(status('amplification', { amplification: 1 }, { amplification: 1.0501 })).toBe('fail');
    expect(status('amplification', { amplification: 1 }, { amplification: 0.5 })).toBe('pass');
  });

  it('higher is better (goodput, successRate): exactly -5 % holds, a hair more fails, more is fine', () => {
    expect(status('goodput', { goodput: 10 }, { goodput: 9.5 })).toBe('pass');
    expect(status('goodput', { goodput: 10 }, { goodput: 9.499 })).toBe('fail');
    expect(status('goodput', { goodput: 10 }, { goodput: 100 })).toBe('pass');
    expect(status('successRate', { successRate: 0.9 }, { successRate: 0.855 })).toBe('pass');
    expect(status('successRate', { successRate: 0.9 }, { successRate: 0.8549 })).toBe('fail');
    expect(one('successRate', { successRate: 0.9 }, { successRate: 0.8 }).message).toBe(
      'fell 11.1 % (90.0 % → 80.0 %), more than the 5 % tolerance allows',
    );
  });

  it('p99, roots and each layer: the limit is base + 5 %', () => {
    expect(status('roots.p99', { p99: 1000 }, { p99: 1050 })).toBe('pass');
    expect(status('roots.p99', { p99: 1000 }, { p99: 1051 })).toBe('fail');
    const layers = (llm: number): Figures => ({ layers: { agent: 400, llm } });
    expect(status('layers.llm.p99', layers(2000), layers(2100))).toBe('pass');
    expect(status('layers.llm.p99', layers(2000), layers(2101))).toBe('fail');
    expect(status('layers.agent.p99', layers(2000), layers(2101))).toBe('pass');
  });

  it('a regression in one metric fails that check only', () => {
    const checks = diffResults(file([variant('engine')]), file([variant('engine', { wastedTokens: 9000 })]));
    expect(checks.filter((c) => c.status === 'fail').map((c) => c.name)).toEqual(['wastedTokens']);
  });
});

describe('diffResults: zeros and the absolute floors', () => {
  it('wasted tokens from 0: noise holds, up to the floor of 1,000 holds, more fails', () => {
    expect(status('wastedTokens', { wastedTokens: 0 }, { wastedTokens: 50 })).toBe('pass');
    expect(status('wastedTokens', { wastedTokens: 0 }, { wastedTokens: 1000 })).toBe('pass');
    const c = one('wastedTokens', { wastedTokens: 0 }, { wastedTokens: 5000 });
    expect(c).toMatchObject({ status: 'fail', actual: '5,000 (+5,000)', expected: '≤ 1,000 (base 0 + floor 1,000)' });
    expect(c.message).toBe('rose 5,000 (0 → 5,000), more than the 1,000 floor allows');
  });

  it('the floor is a minimum: above it the relative tolerance rules', () => {
    expect(status('wastedTokens', { wastedTokens: 10_000 }, { wastedTokens: 11_000 })).toBe('pass'); // 5 % is 500 < 1,000
    expect(status('wastedTokens', { wastedTokens: 10_000 }, { wastedTokens: 11_001 })).toBe('fail');
    expect(status('wastedTokens', { wastedTokens: 100_000 }, { wastedTokens: 105_000 })).toBe('pass'); // 5 % is 5,000
    expect(status('wastedTokens', { wastedTokens: 100_000 }, { wastedTokens: 105_001 })).toBe('fail');
  });

  it('amplification and p99 from 0 are judged against their floors (0.01×, 10 ms)', () => {
    expect(status('amplification', { amplification: 0 }, { amplification: 0.01 })).toBe('pass');
    expect(status('amplification', { amplification: 0 }, { amplification: 0.02 })).toBe('fail');
    expect(status('roots.p99', { p99: 0 }, { p99: 10 })).toBe('pass');
    expect(status('roots.p99', { p99: 0 }, { p99: 11 })).toBe('fail');
  });

  it('goodput and success rate of 0 cannot get worse, and the limit shown does not go below 0', () => {
    const c = one('goodput', { goodput: 0 }, { goodput: 0 });
    expect(c).toMatchObject({
      status: 'pass',
      actual: '0.00/s (unchanged)',
      expected: '≥ 0.00/s (base 0.00/s - floor 0.05/s)',
    });
    expect(status('successRate', { successRate: 0.002 }, { successRate: 0 })).toBe('pass');
    expect(status('successRate', { successRate: 0.02 }, { successRate: 0.01 })).toBe('fail'); // 1 point > the 0.5-point floor
  });

  it('a tolerance of 0 still allows the floor, and judges exact changes above it', () => {
    expect(status('roots.p99', { p99: 1000 }, { p99: 1010 }, '0%')).toBe('pass');
    expect(status('roots.p99', { p99: 1000 }, { p99: 1011 }, '0%')).toBe('fail');
  });
});

describe('diffResults: nulls', () => {
  it('recovery: null is never; never → never holds, a time → never fails, never → a time is better', () => {
    expect(one('recovery', { recoveryMs: null }, { recoveryMs: null })).toMatchObject({
      status: 'pass',
      actual: 'never (unchanged)',
      expected: 'any (base never)',
    });
    const worse = one('recovery', { recoveryMs: 5000 }, { recoveryMs: null });
    expect(worse).toMatchObject({ status: 'fail', actual: 'never', expected: '≤ 6.00 s (base 5.00 s + floor 1.00 s)' });
    expect(worse.message).toBe('never recovered within the run (base 5.00 s), more than the 1.00 s floor allows');
    expect(one('recovery', { recoveryMs: null }, { recoveryMs: 5000 })).toMatchObject({
      status: 'pass',
      actual: '5.00 s (better)',
    });
  });

  it('recovery: 1 s is its floor (per-second bins)', () => {
    expect(status('recovery', { recoveryMs: 5000 }, { recoveryMs: 6000 })).toBe('pass');
    expect(status('recovery', { recoveryMs: 5000 }, { recoveryMs: 7000 })).toBe('fail');
  });

  it('another figure that is null: skipped when the base has none, failed when only the new result lacks it', () => {
    const nul = null as unknown as number;
    expect(one('goodput', { goodput: nul }, { goodput: 3 })).toMatchObject({
      status: 'skip',
      actual: '3.00/s',
      message: 'the base has no figure to compare with',
    });
    expect(one('goodput', { goodput: nul }, { goodput: nul })).toMatchObject({
      status: 'skip',
      message: 'neither result has this figure',
    });
    expect(one('goodput', { goodput: 3 }, { goodput: nul })).toMatchObject({
      status: 'fail',
      actual: '',
      message: 'the new result has no figure for goodput',
    });
  });
});

describe('diffResults: missing and extra variants and layers', () => {
  it('a variant of the base missing from the new result fails; one only in the new result is skipped', () => {
    const checks = diffResults(
      file([variant('naive'), variant('engine')]),
      file([variant('engine'), variant('tuned')]),
    );
    const naive = checks.filter((c) => c.group === 'naive');
    expect(naive).toEqual([
      {
        name: 'variant',
        group: 'naive',
        status: 'fail',
        actual: 'missing',
        expected: 'in the new result',
        message: 'variant naive is in the base but not in the new result',
      },
    ]);
    expect(checks.filter((c) => c.group === 'engine').every((c) => c.status === 'pass')).toBe(true);
    expect(checks.filter((c) => c.group === 'tuned')).toMatchObject([
      { name: 'variant', status: 'skip', message: 'variant tuned is not in the base: nothing to compare it with' },
    ]);
    expect(checks.at(-1)!.group).toBe('tuned'); // new-only variants come last
  });

  it('a layer gone from the new result fails; a new layer is skipped', () => {
    const checks = diffResults(
      file([variant('e', { layers: { agent: 200, llm: 100 } })]),
      file([variant('e', { layers: { agent: 200, tool: 50 } })]),
    );
    expect(checks.find((c) => c.name === 'layers.llm.p99')).toMatchObject({
      status: 'fail',
      message: 'layers.llm.p99 is not in the new result (its layer is gone)',
    });
    expect(checks.find((c) => c.name === 'layers.tool.p99')).toMatchObject({ status: 'skip', actual: '50 ms' });
    expect(checks.find((c) => c.name === 'layers.agent.p99')!.status).toBe('pass');
  });

  it('different scenarios or seeds are still compared (the command warns)', () => {
    const checks = diffResults(file([variant('e')], { seed: 1 }), file([variant('e')], { seed: 2, scenario: 'other' }));
    expect(checks.every((c) => c.status === 'pass')).toBe(true);
  });
});

describe('diffResults: per-metric tolerances', () => {
  const base: Figures = { amplification: 1, goodput: 10, p99: 1000, layers: { agent: 1000, llm: 1000 } };
  const next: Figures = { amplification: 1.03, goodput: 9.6, p99: 1080, layers: { agent: 1080, llm: 1080 } };

  it("a metric's own tolerance applies to it only", () => {
    expect(status('amplification', base, next)).toBe('pass');
    expect(status('amplification', base, next, 'amplification=2%')).toBe('fail');
    expect(status('goodput', base, next, 'amplification=2%')).toBe('pass');
    expect(one('amplification', base, next, 'amplification=2%').expected).toBe('≤ 1.02× (base 1.00× +2 %)');
  });

  it("a family (p99) covers the roots and every layer; a layer's own beats it; the default covers the rest", () => {
    const flags = ['1%', 'p99=10%', 'layers.llm.p99=5%'];
    expect(status('roots.p99', base, next, ...flags)).toBe('pass');
    expect(status('layers.agent.p99', base, next, ...flags)).toBe('pass');
    expect(status('layers.llm.p99', base, next, ...flags)).toBe('fail');
    expect(status('amplification', base, next, ...flags)).toBe('fail'); // 3 % > the default 1 %
  });

  it('long names the gate also knows work too (layers.llm.latencyMs.p99, recoveryMs)', () => {
    expect(status('layers.llm.p99', base, next, 'p99=10%', 'layers.llm.latencyMs.p99=1%')).toBe('fail');
    expect(status('recovery', { recoveryMs: 100_000 }, { recoveryMs: 120_000 }, 'recoveryMs=25%')).toBe('pass');
  });
});

describe('diffResults: degraded and partial root shares', () => {
  const withRoots = (name: string, roots: { degraded?: number; partial?: number }) => {
    const v = variant(name);
    return { ...v, roots: { ...v.roots, ...roots } };
  };

  it('are compared only where a run counts them (tools: degraded; stage budgets: partial)', () => {
    const plain = diffResults(file([variant('engine')]), file([variant('engine')]));
    expect(plain.some((c) => c.name.startsWith('roots.degraded') || c.name.startsWith('roots.partial'))).toBe(false);
    const both = diffResults(
      file([withRoots('engine', { degraded: 0, partial: 0 })]),
      file([withRoots('engine', { degraded: 0, partial: 0 })]),
    );
    expect(both.map((c) => c.name).slice(-2)).toEqual(['roots.degraded share', 'roots.partial share']);
  });

  it('fail when more root tasks end degraded or partial than the floor allows, with the share as the figure', () => {
    // 200 finished roots (190 ok + 10 failed), and the partial ones finish too.
    const base = file([withRoots('engine', { degraded: 0, partial: 0 })]);
    const worse = file([withRoots('engine', { degraded: 20, partial: 30 })]);
    const checks = diffResults(base, worse);
    const degraded = checks.find((c) => c.name === 'roots.degraded share')!;
    const partial = checks.find((c) => c.name === 'roots.partial share')!;
    expect(degraded.status).toBe('fail');
    expect(degraded.actual).toMatch(/^8\.7 %/); // 20 of 230 finished
    expect(partial.status).toBe('fail');
    expect(partial.actual).toMatch(/^13\.0 %/); // 30 of 230 finished
    // One root in 200 is within the floor: not a regression.
    const one = diffResults(base, file([withRoots('engine', { degraded: 1, partial: 0 })]));
    expect(one.find((c) => c.name === 'roots.degraded share')?.status).toBe('pass');
    expect(diffResults(worse, base).find((c) => c.name === 'roots.partial share')?.status).toBe('pass');
  });
});
