import { formatCount, formatMs, formatPercent, formatRate, formatTimes } from '../format.js';
import type { PointFigures, PointSpread, Spread, SweepFile, SweepPoint } from '../sweep-file.js';
import { formatMetric } from './metric-format.js';

/** The table of a sweep's points, as text cells: the same rows in the HTML report and the terminal. */
export interface SweepRows {
  head: string[];
  rows: string[][];
  /** Per row: on the Pareto front. */
  pareto: boolean[];
  /** Index of the row with the best metric (first of equals), or -1 when no point has one. */
  best: number;
  /** Column holding the sweep's metric. */
  metricColumn: number;
}

/** Index of the point with the best metric value, or -1. */
export function bestPoint(file: SweepFile): number {
  let best = -1;
  file.points.forEach((p, i) => {
    if (p.metric === null) return;
    const current = best < 0 ? null : file.points[best].metric;
    if (current === null || (file.higherIsBetter ? p.metric > current : p.metric < current)) best = i;
  });
  return best;
}

/** `12.1/s ±0.4/s`: a mean and half its 95 % interval over seeds (the mean alone without one). */
const pm = (text: string, s: Spread | undefined, format: (x: number) => string): string =>
  s === undefined ? text : `${text} ±${format((s.high - s.low) / 2)}`;

/**
 * The figures every point has: column head, the metric names that mean it, the format (with
 * the point's spread over seeds, for the figures that have one).
 */
const FIGURES: Array<[string, string[], (f: PointFigures, s?: PointSpread) => string]> = [
  ['amplification', ['amplification'], (f, s) => pm(formatTimes(f.amplification), s?.amplification, formatTimes)],
  ['goodput', ['goodput'], (f, s) => pm(formatRate(f.goodput), s?.goodput, formatRate)],
  ['success', ['successRate', 'success'], (f) => formatPercent(f.successRate)],
  [
    'root p99',
    ['p99', 'p99Ms', 'roots.p99', 'roots.latencyMs.p99'],
    (f, s) => pm(formatMs(f.p99Ms), s?.p99Ms, formatMs),
  ],
  ['recovery', ['recovery', 'recoveryMs'], (f) => (f.recoveryMs === null ? 'never' : formatMs(f.recoveryMs))],
  ['shed', ['shed'], (f) => formatCount(f.shed)],
  ['wasted tokens', ['wastedTokens', 'upstream.wastedTokens'], (f) => formatCount(f.wastedTokens)],
];

/** Whether the sweep's metric is one of the figures (then it gets no column of its own). */
const figureOf = (metric: string): number => FIGURES.findIndex(([, names]) => names.includes(metric.trim()));

function row(file: SweepFile, p: SweepPoint, own: boolean): string[] {
  const m = p.spread?.metric ?? undefined;
  const metric = own ? [pm(formatMetric(file.metric, p.metric), m, (x) => formatMetric(file.metric, x))] : [];
  return [
    ...p.values.map(String),
    ...metric,
    ...FIGURES.map(([, , format]) => format(p.figures, p.spread)),
    p.pareto ? 'yes' : '',
  ];
}

export function sweepRows(file: SweepFile): SweepRows {
  const figure = figureOf(file.metric);
  const own = figure < 0;
  return {
    head: [
      ...file.params.map((p) => p.path),
      ...(own ? [file.metric] : []),
      ...FIGURES.map(([head]) => head),
      'pareto',
    ],
    rows: file.points.map((p) => row(file, p, own)),
    pareto: file.points.map((p) => p.pareto),
    best: bestPoint(file),
    metricColumn: file.params.length + (own ? 0 : figure),
  };
}
