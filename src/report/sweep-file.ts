import type { EffectiveScenario } from '../run/metrics/result.js';
import type { FigureUnit } from './format.js';

/**
 * The versioned result of `stormlab sweep` (`stormlab.sweep/v1`): one point per combination of
 * the swept parameters, every point simulated with the same scenario and seed, so the table is
 * the same however many workers ran it.
 */
export const SWEEP_SCHEMA = 'stormlab.sweep/v1';

/** One swept parameter: a `--set` path and the values it takes, in the order given. */
export interface SweepParam {
  path: string;
  values: Array<number | string | boolean>;
}

/** The figures every point reports, whatever metric the sweep was asked to chart. */
export interface PointFigures {
  /** Upstream attempts ÷ logical leaf calls. */
  amplification: number;
  /** Root tasks ok within their deadline, per second. */
  goodput: number;
  /** Root tasks ok within their deadline ÷ offered. */
  successRate: number;
  /** Root tasks' p99 latency, ms from the intended start. */
  p99Ms: number;
  /** Upstream tokens spent on attempts whose caller had given up or failed. */
  wastedTokens: number;
  /** Calls shed locally, every layer and reason. */
  shed: number;
  /** As in the run result: null when goodput did not recover within the run. */
  recoveryMs: number | null;
}

/** A 95 % confidence interval of a mean over seeds. */
export interface Spread {
  low: number;
  high: number;
}

/** How far a point's headline figures vary over its seeds (with `--seeds` above 1). */
export interface PointSpread {
  /** The metric's interval; null when a seed had no value. */
  metric: Spread | null;
  goodput: Spread;
  amplification: Spread;
  p99Ms: Spread;
}

export interface SweepPoint {
  /** The value of each parameter at this point, in the order of `params`. */
  values: Array<number | string | boolean>;
  /** Over several seeds (`seeds`), the mean of each figure over them. */
  figures: PointFigures;
  /** The value of the sweep's `metric` at this point (null when it has none, e.g. no recovery). */
  metric: number | null;
  /** On the Pareto front of goodput (higher), amplification (lower) and p99 (lower). */
  pareto: boolean;
  /** With several seeds: the 95 % interval of the mean of the metric and the headline figures. */
  spread?: PointSpread;
}

/** A grid cell not simulated: the scenario or the engine refuses its values together (breaker.openMs above maxOpenMs). */
export interface SweepRefusedPoint {
  /** The value of each parameter at this cell, in the order of `params`. */
  values: Array<number | string | boolean>;
  /** Why, on one line: `engine: breaker.maxOpenMs must be a number >= 60000, got 30000`. */
  reason: string;
}

export interface SweepFile {
  schema: typeof SWEEP_SCHEMA;
  scenario: string;
  /** The variant every point ran (`engine` when the scenario has one), or the scenario's own name. */
  variant: string;
  seed: number;
  /**
   * With `--seeds N` above 1: the seeds every point ran on (the same for every point, so points
   * differ by their values, not their luck); figures and metric are means over them.
   */
  seeds?: number[];
  params: SweepParam[];
  /** The metric charted in the heatmap, as named on the command line (`goodput`, `layers.llm.p99`). */
  metric: string;
  /** Whether higher values of `metric` are better (goodput) or lower (amplification, p99). */
  higherIsBetter: boolean;
  /** How `metric` reads, for formatting its values (optional: files written before it lack it). */
  unit?: FigureUnit;
  /** The simulated points, row-major over `params`: the last parameter varies fastest. */
  points: SweepPoint[];
  /**
   * The grid's cells that were refused instead (row-major too), when there are any: absent
   * otherwise, and absent from files written before it. `points` and `refused` make the grid.
   */
  refused?: SweepRefusedPoint[];
  /**
   * What every point ran before its own values: the scenario document after the variant's
   * overrides and the command line's, and each field they set. A point's document is this one
   * with each `params[i].path` set to its `values[i]` (then its seed, with `seeds`): point
   * values are command-line values, applied last, so they win over the variant's. Absent in
   * files written before it was.
   */
  effective?: EffectiveScenario;
  timing: { wallMs: number; workers: number };
}

/**
 * How the sweep's metric reads (the gate catalog's units, repeated here because report sits
 * left of gate): `times` 1.07×, `rate` 15.3/s, `share` 95.1 %, `ms` 1.23 s, `count`, `tokens`.
 */

/**
 * The sweep file as JSON: keys in the order the types declare them (the sweep builds its
 * objects in that order), 2-space indent, arrays of plain values (a point's `values`) on one
 * line, trailing newline. Same sweep, same bytes: figures are rounded when the file is built.
 */
export function sweepJson(file: SweepFile): string {
  const text = JSON.stringify(file, null, 2);
  // An array holding no object or array is plain values: `[\n  1.5,\n  0.1\n]` → `[1.5, 0.1]`.
  // Strings cannot hold a raw newline in JSON, so `,\n` only ever separates elements.
  const flat = text.replace(
    /\[\n\s*([^[\]{}\n]*(?:,\n\s*[^[\]{}\n]*)*)\n\s*\]/g,
    (_, inner: string) => `[${inner.split(/,\n\s*/).join(', ')}]`,
  );
  return `${flat}\n`;
}

/** The columns of `sweepCsv` after the parameters, with the figure each holds. */
const CSV_FIGURES: Array<[string, (p: SweepPoint) => number | null]> = [
  ['goodput', (p) => p.figures.goodput],
  ['amplification', (p) => p.figures.amplification],
  ['successRate', (p) => p.figures.successRate],
  ['p99Ms', (p) => p.figures.p99Ms],
  ['wastedTokens', (p) => p.figures.wastedTokens],
  ['shed', (p) => p.figures.shed],
  ['recoveryMs', (p) => p.figures.recoveryMs],
];

/** A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180). */
function csvField(v: number | string | boolean | null): string {
  const s = v === null ? '' : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/**
 * One row per grid cell, in grid order, with a header: the parameters by path, the figures
 * (raw numbers: ms, per second, shares as 0–1), the metric under its name (`metric:<name>`,
 * so it never clashes with a figure's column), and `pareto` (true/false). Empty = no value.
 * When some cells were refused, a last column `refused` holds why, and their figures are
 * empty; a sweep without any keeps the columns it always had.
 */
export function sweepCsv(file: SweepFile): string {
  const anyRefused = (file.refused?.length ?? 0) > 0;
  const head = [
    ...file.params.map((p) => p.path),
    ...CSV_FIGURES.map(([name]) => name),
    `metric:${file.metric}`,
    'pareto',
    ...(anyRefused ? ['refused'] : []),
  ];
  const rows = sweepCells(file).map((c) =>
    isRefusedCell(c)
      ? [...c.values, ...CSV_FIGURES.map(() => null), null, null, c.reason]
      : [...c.values, ...CSV_FIGURES.map(([, get]) => get(c)), c.metric, c.pareto, ...(anyRefused ? [null] : [])],
  );
  return `${[head, ...rows].map((r) => r.map(csvField).join(',')).join('\n')}\n`;
}

/** A cell of the grid: a simulated point, or one refused. */
export type SweepCell = SweepPoint | SweepRefusedPoint;

export function isRefusedCell(c: SweepCell): c is SweepRefusedPoint {
  return 'reason' in c && !('figures' in c);
}

/** Every cell of the grid, simulated or refused, in grid order (row-major, the last parameter fastest). */
export function sweepCells(file: SweepFile): SweepCell[] {
  if (file.refused === undefined || file.refused.length === 0) return file.points;
  const place = (c: SweepCell): number =>
    file.params.reduce((n, p, j) => n * p.values.length + Math.max(0, p.values.indexOf(c.values[j])), 0);
  return [...file.points, ...file.refused]
    .map((c) => ({ c, at: place(c) }))
    .sort((a, b) => a.at - b.at)
    .map((x) => x.c);
}
