import type { EChartsOption, LineSeriesOption } from 'echarts';
import type { EngineSeries, RunResult } from '../../run/metrics/result.js';
import { round3 } from './chart-kit.js';
import type { SharedScales } from './shared-scales.js';
import { phaseMarks, ranges, timeAxis, timed } from './time-axis.js';
import { line, variantFrame } from './variant-charts.js';

// Layer hues stay clear of the variant colours (the title carries the variant's).
const LAYER_COLORS = ['#374151', '#a16207', '#db2777', '#9ca3af', '#78350f'];
/** Height of one layer's row in the breaker band, px. */
const ROW = 18;
const BAND_NAME = 'breaker open';

/** The throttle's drop probability (left axis) and the budget's balance (right axis, dashed) of one layer. */
function stateLines(v: RunResult, e: EngineSeries, color: string): LineSeriesOption[] {
  return [
    line(`drop · ${e.layer}`, color, timed(v.series, e.dropProbability.map(round3)), { lineStyle: { width: 1.8 } }),
    line(`budget · ${e.layer}`, color, timed(v.series, e.budgetBalance.map(round3)), {
      yAxisIndex: 1,
      lineStyle: { width: 1.4, type: 'dashed' },
    }),
  ];
}

/**
 * One layer's row of the breaker band: a thick segment over each open period, on the band's
 * own grid (a category axis of layers under the main chart). '-' ends a segment.
 */
function bandSeries(v: RunResult, e: EngineSeries): LineSeriesOption {
  const data = ranges(v.series, e.breakerOpen).flatMap(([a, b]) => [
    [a, e.layer],
    [b, e.layer],
    [b, '-'],
  ]);
  return {
    type: 'line',
    name: BAND_NAME,
    xAxisIndex: 1,
    yAxisIndex: 2,
    color: '#111827',
    showSymbol: false,
    lineStyle: { width: ROW - 6, cap: 'butt' },
    data,
  };
}

/**
 * The engine's state per second at each engine layer: the throttle's drop probability and the
 * retry budget's balance as lines, and under them a band with a row per layer, red while its
 * breaker was open. Null for a variant without the engine (nothing to draw).
 */
export function engineChart(v: RunResult, color: string, scales: SharedScales): EChartsOption | null {
  const engines = v.series.engine;
  if (engines.length === 0) return null;
  const lines = engines.flatMap((e, i) => stateLines(v, e, LAYER_COLORS[i % LAYER_COLORS.length]));
  lines[0] = { ...lines[0], ...phaseMarks(v.series, v.durationMs) };
  const band = engines.length * ROW + 4;
  const main = timeAxis(scales.end);
  return {
    ...variantFrame(v, color, 'engine state', 'solid: drop probability · dashed: budget balance'),
    axisPointer: { link: [{ xAxisIndex: 'all' }] },
    grid: [
      // The top is fitLegend's to set, under the legend.
      { left: 100, right: 56, top: 90, bottom: 48 + band + 14 },
      { left: 100, right: 56, height: band, bottom: 48 },
    ],
    xAxis: [
      { ...main, gridIndex: 0, name: '', axisLabel: { show: false } },
      { ...main, gridIndex: 1, splitLine: { show: false } },
    ],
    yAxis: [
      { type: 'value', gridIndex: 0, name: 'drop probability', nameLocation: 'middle', nameGap: 40, min: 0, max: 1 },
      {
        type: 'value',
        gridIndex: 0,
        name: 'budget balance (retries)',
        nameLocation: 'middle',
        nameGap: 40,
        min: 0,
        splitLine: { show: false },
      },
      {
        type: 'category',
        gridIndex: 1,
        data: engines.map((e) => e.layer),
        inverse: true,
        axisTick: { show: false },
        splitLine: { show: true },
      },
    ],
    series: [...lines, ...engines.map((e) => bandSeries(v, e))],
  };
}
