import type { BarSeriesOption, EChartsOption, LineSeriesOption } from 'echarts';
import type { RunResult } from '../../run/metrics/result.js';
import { frame, niceMax, round3, shade } from './chart-kit.js';
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

/** The frame of a per-variant chart: its title in the variant's colour. */
export function variantFrame(v: RunResult, color: string, title: string, subtitle?: string): EChartsOption {
  const f = frame({ title: `${v.name} — ${title}`, subtitle });
  const t = f.title as { textStyle?: object };
  return { ...f, title: { ...t, textStyle: { ...t.textStyle, color } } };
}

function timeChart(
  v: RunResult,
  color: string,
  title: string,
  end: number,
  yMax: number | undefined,
  series: LineSeriesOption[],
): EChartsOption {
  return {
    ...variantFrame(v, color, title),
    xAxis: timeAxis(end),
    yAxis: { type: 'value', name: 'per second', nameLocation: 'middle', nameGap: 48, min: 0, max: niceMax(yMax ?? 0) },
    series: withMarks(series, v),
  };
}

/**
 * Offered roots/s and logical leaf calls/s (greys) against what reached the upstream (the
 * variant's colour), on the shared scale: a storm's attempts draw taller than an engine's.
 */
export function loadChart(v: RunResult, color: string, scales: SharedScales): EChartsOption {
  const s = v.series;
  return timeChart(v, color, 'offered load vs upstream attempts', scales.end, scales.load, [
    line('roots offered /s', '#9ca3af', timed(s, s.offered)),
    line('logical leaf calls /s', '#4b5563', timed(s, s.leafCalls), { lineStyle: { width: 1.6, type: 'dashed' } }),
    line('upstream attempts /s', color, timed(s, s.upstreamAttempts), { lineStyle: { width: 2.2 } }),
  ]);
}

/**
 * What the upstream refused (429, 5xx, timeouts and resets) and what the engine shed before
 * sending. Each variant on its own scale: next to a storm's thousands, an engine's handful of
 * refusals and sheds would be a flat line.
 */
export function refusedChart(v: RunResult, color: string, scales: SharedScales): EChartsOption {
  const s = v.series;
  // Status hues (amber, brown, grey) stay clear of the variant colours.
  return timeChart(v, color, 'refused upstream and shed locally', scales.end, undefined, [
    line('429 /s', '#f59e0b', timed(s, s.status429)),
    line('5xx /s', '#92400e', timed(s, s.status5xx)),
    line('timeouts + resets /s', '#6b7280', timed(s, s.timeouts)),
    line('shed locally /s', color, timed(s, s.shed), { lineStyle: { width: 1.6, type: 'dashed' } }),
  ]);
}

/** Percentiles as shades of the variant's colour, p99 the fullest. */
const PERCENTILE_ALPHA = { p50: 0.35, p95: 0.65, p99: 1 } as const;

/** Latency percentiles of root tasks and of each layer (there is no latency time series: histograms are per run). */
export function latencyChart(v: RunResult, color: string, scales: SharedScales): EChartsOption {
  const rows = [{ name: 'roots', latencyMs: v.roots.latencyMs }, ...v.layers];
  const bar = (p: keyof typeof PERCENTILE_ALPHA): BarSeriesOption => ({
    type: 'bar',
    name: p,
    color: shade(color, PERCENTILE_ALPHA[p]),
    data: rows.map((r) => round3(r.latencyMs[p] / 1000)),
  });
  return {
    ...variantFrame(
      v,
      color,
      'latency percentiles',
      'from the intended start; roots: whole task, layers: per logical call',
    ),
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
