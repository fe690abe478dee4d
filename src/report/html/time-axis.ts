import type { LineSeriesOption, XAXisComponentOption } from 'echarts';
import type { SeriesResult } from '../../run/metrics/result.js';

/** A point of a time chart: seconds since the run started, and the value (null leaves a gap). */
export type TimePoint = [number, number | null];

/** Start of bin `i` in seconds. */
export function binStart(s: SeriesResult, i: number): number {
  return ((s.fromBin + i) * s.binMs) / 1000;
}

/** Bins in a series: every per-second array has one entry per bin. */
export function binCount(s: SeriesResult): number {
  return s.offered.length;
}

/** Per-bin values as time points; bins a shorter array lacks are gaps. */
export function timed(s: SeriesResult, values: ReadonlyArray<number | null>): TimePoint[] {
  return Array.from({ length: binCount(s) }, (_, i) => [binStart(s, i), values[i] ?? null]);
}

/** End of a series in seconds: where its last bin ends. */
export function seriesEnd(s: SeriesResult): number {
  return binStart(s, binCount(s));
}

/** Tick steps in seconds, the first that gives at most 8 ticks wins. */
const STEPS = [1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 1800, 3600];

/**
 * The time axis of every time chart: seconds from 0, ticks on round steps, the end rounded up
 * to the next tick (a last label of 131 beside 120 would overlap it). Charts side by side
 * pass the same `endSeconds` so their times line up.
 */
export function timeAxis(endSeconds: number): XAXisComponentOption {
  const interval = STEPS.find((step) => endSeconds / step <= 8) ?? Math.ceil(endSeconds / 8 / 3600) * 3600;
  const max = Math.max(interval, Math.ceil(endSeconds / interval - 1e-9) * interval);
  return { type: 'value', name: 'time (s)', nameLocation: 'middle', nameGap: 28, min: 0, max, interval };
}

/** Runs of consecutive bins where `on[i] > 0`, as [from, to) in seconds. */
export function ranges(s: SeriesResult, on: readonly number[]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let from = -1;
  for (let i = 0; i <= binCount(s); i++) {
    const active = i < binCount(s) && (on[i] ?? 0) > 0;
    if (active && from < 0) from = i;
    if (!active && from >= 0) {
      out.push([binStart(s, from), binStart(s, i)]);
      from = -1;
    }
  }
  return out;
}

/**
 * The marks a time chart's first series carries: fault phases shaded (series.faultActive),
 * and a dashed line where arrivals stop when the series runs on into the drain.
 */
export function phaseMarks(s: SeriesResult, durationMs: number): Pick<LineSeriesOption, 'markArea' | 'markLine'> {
  const faults = ranges(s, s.faultActive);
  const end = durationMs / 1000;
  const marks: Pick<LineSeriesOption, 'markArea' | 'markLine'> = {};
  if (faults.length > 0) {
    marks.markArea = {
      silent: true,
      itemStyle: { color: 'rgba(245, 158, 11, 0.14)' },
      label: { show: true, position: 'insideTop', color: '#b45309', fontSize: 11 },
      data: faults.map(([a, b]) => [{ xAxis: a, name: 'fault' }, { xAxis: b }]),
    };
  }
  if (end > 0 && end < seriesEnd(s)) {
    marks.markLine = {
      silent: true,
      symbol: 'none',
      lineStyle: { type: 'dashed', color: '#9ca3af' },
      label: { formatter: 'arrivals stop', position: 'end', color: '#6b7280', fontSize: 11 },
      data: [{ xAxis: end }],
    };
  }
  return marks;
}
