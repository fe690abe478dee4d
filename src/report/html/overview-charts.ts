import type { EChartsOption, LineSeriesOption } from 'echarts';
import type { ResultFile, RunResult } from '../../run/metrics/result.js';
import { frame, round3, variantColor } from './chart-kit.js';
import { phaseMarks, seriesEnd, timeAxis, timed } from './time-axis.js';

/** Upstream attempts ÷ logical leaf calls in each second; a gap where no leaf call started. */
export function amplificationPerSecond(v: RunResult): Array<number | null> {
  const { upstreamAttempts, leafCalls } = v.series;
  return leafCalls.map((calls, i) => (calls > 0 ? round3((upstreamAttempts[i] ?? 0) / calls) : null));
}

/** One chart, one line per variant; the first variant's timeline carries the fault shading. */
function perVariant(
  file: ResultFile,
  title: string,
  subtitle: string,
  yName: string,
  values: (v: RunResult) => Array<number | null>,
): EChartsOption {
  const first = file.variants[0];
  const series: LineSeriesOption[] = file.variants.map((v, i) => ({
    type: 'line',
    name: v.name,
    color: variantColor(i),
    showSymbol: false,
    lineStyle: { width: 1.8 },
    data: timed(v.series, values(v)),
    ...(i === 0 ? phaseMarks(first.series, first.durationMs) : {}),
  }));
  return {
    ...frame({ title, subtitle }),
    // The longest run sets the time axis.
    xAxis: timeAxis(Math.max(...file.variants.map((v) => seriesEnd(v.series)))),
    yAxis: { type: 'value', name: yName, nameLocation: 'middle', nameGap: 48, min: 0 },
    series,
  };
}

export function amplificationChart(file: ResultFile): EChartsOption {
  return perVariant(
    file,
    'Amplification per second',
    'upstream attempts ÷ logical leaf calls started that second',
    'amplification (×)',
    amplificationPerSecond,
  );
}

export function goodputChart(file: ResultFile): EChartsOption {
  return perVariant(
    file,
    'Goodput per second',
    'root tasks completed ok within their deadline',
    'roots ok /s',
    (v) => v.series.ok,
  );
}
