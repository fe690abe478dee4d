import type { ResultFile } from '../../src/run/metrics/result.js';
import {
  SWEEP_SCHEMA,
  type PointFigures,
  type SweepFile,
  type SweepParam,
  type SweepPoint,
} from '../../src/report/sweep-file.js';
import { cli } from '../cli/capture-io.js';

/** Every combination of the params' values, row-major (the last param varies fastest), as a sweep lists them. */
export function grid(params: readonly SweepParam[]): Array<Array<number | string | boolean>> {
  return params.reduce<Array<Array<number | string | boolean>>>(
    (rows, p) => rows.flatMap((r) => p.values.map((v) => [...r, v])),
    [[]],
  );
}

/** Whether `a` dominates `b`: no worse on goodput (higher), amplification and p99 (lower), better on one. */
function dominates(a: PointFigures, b: PointFigures): boolean {
  const noWorse = a.goodput >= b.goodput && a.amplification <= b.amplification && a.p99Ms <= b.p99Ms;
  return noWorse && (a.goodput > b.goodput || a.amplification < b.amplification || a.p99Ms < b.p99Ms);
}

/** Points with their figures and metric, marked on or off the Pareto front. */
export function withPareto(points: Array<Omit<SweepPoint, 'pareto'>>): SweepPoint[] {
  return points.map((p) => ({ ...p, pareto: !points.some((q) => q !== p && dominates(q.figures, p.figures)) }));
}

export interface FakeSweepOptions {
  params: SweepParam[];
  metric?: string;
  higherIsBetter?: boolean;
  scenario?: string;
  /** Points (by index) whose metric is null, as when a run never recovered. */
  nullAt?: number[];
}

/**
 * A hand-made sweep: figures follow the grid position (more of the first param: less
 * amplification and goodput; more of the second: more p99), so the front has a few points.
 */
export function fakeSweep(o: FakeSweepOptions): SweepFile {
  const metric = o.metric ?? 'goodput';
  const points = grid(o.params).map((values, i) => {
    const [a, b] = values.map((v, j) => o.params[j].values.indexOf(v));
    const figures: PointFigures = {
      amplification: 1 + 2 / (1 + a) + (i % 3) * 0.01,
      goodput: 10 + 2 * (b ?? 0) - a * 0.5 + (i % 2) * 0.25,
      successRate: 0.8 + 0.02 * a,
      p99Ms: 1000 + 500 * (b ?? 0) + 10 * i,
      wastedTokens: 1000 * (i + 1),
      shed: 10 * i,
      recoveryMs: i % 4 === 3 ? null : 1000 * i,
    };
    if (i % 3 === 2) {
      // Worse than the point before it on all three counts: off the front.
      figures.amplification += 0.5;
      figures.goodput -= 3;
      figures.p99Ms += 2000;
    }
    const value = (figures as unknown as Record<string, number | null>)[metric] ?? null;
    return { values, figures, metric: o.nullAt?.includes(i) ? null : value };
  });
  return {
    schema: SWEEP_SCHEMA,
    scenario: o.scenario ?? 'brownout',
    variant: 'engine',
    seed: 1,
    params: o.params,
    metric,
    higherIsBetter: o.higherIsBetter ?? true,
    points: withPareto(points),
    timing: { wallMs: 1234, workers: 4 },
  };
}

function figuresOf(file: ResultFile): PointFigures {
  const v = file.variants[0];
  const shed = v.layers.reduce((sum, l) => sum + Object.values(l.shed).reduce((a, b) => a + (b ?? 0), 0), 0);
  return {
    amplification: v.amplification,
    goodput: v.goodput,
    successRate: v.successRate,
    p99Ms: v.roots.latencyMs.p99,
    wastedTokens: v.upstream.wastedTokens,
    shed,
    recoveryMs: v.recoveryMs,
  };
}

/**
 * A sweep made of real simulations, as `stormlab sweep` would make it: one short `run` of
 * the scenario's engine variant per grid point, with the point's values as --set flags.
 */
export async function simulatedSweep(scenario: string, params: SweepParam[], duration = '10s'): Promise<SweepFile> {
  const points = [];
  for (const values of grid(params)) {
    const set = values.flatMap((v, j) => ['--set', `${params[j].path}=${String(v)}`]);
    const r = await cli([
      'run',
      scenario,
      '--variant',
      'engine',
      '--duration',
      duration,
      ...set,
      '--json',
      'point.json',
      '-q',
    ]);
    const text = r.files.get('point.json');
    if (text === undefined) throw new Error(`run ${values.join(',')} failed (exit ${r.code}): ${r.err}`);
    const figures = figuresOf(JSON.parse(text) as ResultFile);
    points.push({ values, figures, metric: figures.goodput });
  }
  return {
    schema: SWEEP_SCHEMA,
    scenario,
    variant: 'engine',
    seed: 1,
    params,
    metric: 'goodput',
    higherIsBetter: true,
    points: withPareto(points),
    timing: { wallMs: 0, workers: 1 },
  };
}
