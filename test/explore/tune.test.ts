import { describe, expect, it } from 'vitest';
import { MetricCatalog } from '../../src/gate/metric-catalog.js';
import { RefusedError } from '../../src/explore/refused-error.js';
import type { PointOutcome, RunPointsFn } from '../../src/explore/run-points.js';
import { tune, type TuneSpec } from '../../src/explore/tune.js';
import { parseGoal } from '../../src/explore/tune-goal.js';
import { tuneHeadline, tuneReport } from '../../src/report/tune-report.js';
import { fakeRun } from '../report/fixture.js';

const catalog = MetricCatalog.ofScenario({
  traffic: { layers: [{ name: 'llm' }] },
  upstream: { models: [{ name: 'primary' }] },
} as never);

/** Tuning engine.throttle.k in 1–3 (now 1.5) for goodput; the stand-in runner decides what is refused. */
function spec(budget: number): TuneSpec {
  return {
    job: { scenario: 'x.yaml', cwd: '/', set: [] },
    scenario: 'x',
    variant: 'engine',
    seed: 1,
    durationMs: 20_000,
    params: [
      {
        name: 'engine.throttle.k',
        path: 'engine.throttle.k',
        min: 1,
        max: 3,
        duration: false,
        builtIn: false,
        current: 1.5,
      },
    ],
    goal: parseGoal({ maximize: 'goodput' }, catalog, ['engine'], 'engine'),
    budget,
    workers: 1,
    wallNow: () => 0,
  };
}

/**
 * A stand-in for `runPoints`: goodput grows with k, and the points `refuse` picks are refused.
 * The baseline (no --set) runs as k = 1.5.
 */
function runner(refuse: (k: number | undefined) => boolean): RunPointsFn {
  return async (_job, points) =>
    points.map((sets): PointOutcome => {
      const k = sets.length === 0 ? undefined : Number(sets[0].split('=')[1]);
      if (refuse(k)) return { refused: `engine: throttle.k ${k ?? 'now'} clashes` };
      return fakeRun('engine', { roots: 40, leafAttempts: 1, okShare: (k ?? 1.5) / 4 });
    });
}

describe('tune with refused points', () => {
  it('counts a refused point infeasible: it spends its place in the budget, ranks last, and is listed and said', async () => {
    const file = await tune(
      spec(8),
      runner((k) => k !== undefined && k > 2.2),
    );
    // The best is the best point that ran, below the refused ones that would have been better.
    expect(file.best.values[0]).toBeLessThanOrEqual(2.2);
    expect(file.best.values[0]).toBeGreaterThan(1.5);
    expect(file.points.every((p) => p.values[0]! <= 2.2)).toBe(true);
    const refused = file.refused!;
    expect(refused.length).toBeGreaterThan(0);
    expect(
      refused.every(
        (p) => p.values[0] > 2.2 && p.reason === `engine: throttle.k ${p.values[0]} clashes` && p.round >= 1,
      ),
    ).toBe(true);
    expect(file.points.length + refused.length).toBe(file.search.evaluations);
    expect(file.search.evaluations).toBe(8);
    expect(tuneReport(file)).toContain(
      `\n${refused.length} of 9 points skipped because their values are refused, e.g. engine.throttle.k=${refused[0].values[0]}: ${refused[0].reason}\n`,
    );
    expect(tuneHeadline(file)).toMatch(new RegExp(` · ${refused.length} skipped \\(refused\\)$`)); // the -q line says so too
  });

  it('writes no refused field when none was', async () => {
    const file = await tune(
      spec(5),
      runner(() => false),
    );
    expect(file).not.toHaveProperty('refused');
    expect(tuneReport(file)).not.toContain('skipped');
    expect(tuneHeadline(file)).not.toContain('skipped');
  });

  it('throws a RefusedError when the baseline is refused', async () => {
    const err = await tune(
      spec(5),
      runner((k) => k === undefined),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RefusedError);
    expect((err as Error).message).toBe(
      'the scenario as written (the baseline every point is compared with) is refused: engine: throttle.k now clashes',
    );
  });

  it('throws a RefusedError on one line when every point of the search is refused', async () => {
    const err = await tune(
      spec(5),
      runner((k) => k !== undefined),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RefusedError);
    expect((err as Error).message).toMatch(
      /^every one of the 5 points is refused, e\.g\. engine\.throttle\.k=[\d.]+: engine: throttle\.k [\d.]+ clashes$/,
    );
  });
});
