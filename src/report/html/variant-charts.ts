import type { BarSeriesOption, EChartsOption, LineSeriesOption } from 'echarts';
import type { RunResult } from '../../run/metrics/result.js';
import { frame, niceMax, round3 } from './chart-kit.js';
import type { SharedScales } from './shared-scales.js';
import { phaseMarks, timeAxis, timed } from './time-axis.js';

/** A thin line without point symbols: a few hundred bins read as a curve. */
export function line(
  name: string,
  color: string,
  data: LineSeriesOption['data'],
  extra: Partial<LineSeriesOption> = {},
): LineSeriesOption {
  return { type: 'line', name, data, color, showSymbol: false, lineStyle: { width: 1.6 }, ...extra };
}

/** Marks on the first series only, so each fault is shaded once. */
function withMarks(series: LineSeriesOption[], v: RunResult): LineSeriesOption[] {
  return series.map((s, i) => (i === 0 ? { ...s, ...phaseMarks(v.series, v.durationMs) } : s));
}

function timeChart(
  v: RunResult,
  title: string,
  end: number,
  yMax: number | undefined,
  series: LineSeriesOption[],
): EChartsOption {
  return {
    ...frame({ title: `${v.name} — ${title}` }),
    xAxis: timeAxis(end),
    yAxis: { type: 'value', name: 'per second', nameLocation: 'middle', nameGap: 48, min: 0, max: niceMax(yMax ?? 0) },
    series: withMarks(series, v),
  };
}

/** Offered roots/s and logical leaf calls/s against what reached the upstream, on the shared scale. */
export function loadChart(v: RunResult, scales: SharedScales): EChartsOption {
  const s = v.series;
  return timeChart(v, 'offered load vs upstream attempts', scales.end, scales.load, [
    line('roots offered /s', '#6b7280', timed(s, s.offered)),
    line('logical leaf calls /s', '#2563eb', timed(s, s.leafCalls)),
    line('upstream attempts /s', '#dc2626', timed(s, s.upstreamAttempts), { lineStyle: { width: 2 } }),
  ]);
}

/**
 * What the upstream refused (429, 5xx, timeouts and resets) and what the engine shed before
 * sending. Each variant on its own scale: next to a storm's thousands, an engine's handful of
 * refusals and sheds would be a flat line.
 */
export function refusedChart(v: RunResult, scales: SharedScales): EChartsOption {
  const s = v.series;
  return timeChart(v, 'refused upstream and shed locally', scales.end, undefined, [
    line('429 /s', '#f59e0b', timed(s, s.status429)),
    line('5xx /s', '#dc2626', timed(s, s.status5xx)),
    line('timeouts + resets /s', '#7c3aed', timed(s, s.timeouts)),
    line('shed locally /s', '#0d9488', timed(s, s.shed), { lineStyle: { width: 1.6, type: 'dashed' } }),
  ]);
}

const PERCENTILE_COLORS = { p50: '#93c5fd', p95: '#3b82f6', p99: '#1e3a8a' } as const;

/** Latency percentiles of root tasks and of each layer (there is no latency time series: histograms are per run). */
export function latencyChart(v: RunResult, scales: SharedScales): EChartsOption {
  const rows = [{ name: 'roots', latencyMs: v.roots.latencyMs }, ...v.layers];
  const bar = (p: keyof typeof PERCENTILE_COLORS): BarSeriesOption => ({
    type: 'bar',
    name: p,
    color: PERCENTILE_COLORS[p],
    data: rows.map((r) => round3(r.latencyMs[p] / 1000)),
  });
  return {
    ...frame({
      title: `${v.name} — latency percentiles`,
      subtitle: 'from the intended start; roots: whole task, layers: per logical call',
    }),
    tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' }, confine: true },
    // Every layer named, however narrow the chart (ECharts would drop labels it thinks overlap).
    xAxis: {
      type: 'category',
      data: rows.map((r) => r.name),
      name: 'layer',
      nameLocation: 'middle',
      nameGap: 28,
      axisLabel: { interval: 0, hideOverlap: false },
    },
    yAxis: {
      type: 'value',
      name: 'latency (s)',
      nameLocation: 'middle',
      nameGap: 48,
      min: 0,
      max: niceMax(scales.latencyMs / 1000),
    },
    series: [bar('p50'), bar('p95'), bar('p99')],
  };
}
