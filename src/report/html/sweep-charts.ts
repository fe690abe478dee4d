import type { EChartsOption, HeatmapSeriesOption, LinesSeriesOption, ScatterSeriesOption } from 'echarts';
import type { SweepFile, SweepPoint } from '../sweep-file.js';
import { frame, round3 } from './chart-kit.js';
import { formatMetric } from './metric-format.js';

/** `engine.throttle.k=1.5 · engine.budget.ratio=0.1`: a point by its parameter values. */
export function pointName(file: SweepFile, p: SweepPoint): string {
  return file.params.map((param, j) => `${param.path}=${String(p.values[j])}`).join(' · ');
}

const better = (file: SweepFile, a: number, b: number): boolean => (file.higherIsBetter ? a > b : a < b);

/** Per heatmap cell (x over params[0], y over params[1]), the point with the best metric there. */
export function heatmapCells(file: SweepFile): Map<string, SweepPoint> {
  const cells = new Map<string, SweepPoint>();
  for (const p of file.points) {
    const x = file.params[0].values.indexOf(p.values[0]);
    const y = file.params.length > 1 ? file.params[1].values.indexOf(p.values[1]) : 0;
    const key = `${x},${y}`;
    const held = cells.get(key);
    if (held === undefined || (p.metric !== null && (held.metric === null || better(file, p.metric, held.metric))))
      cells.set(key, p);
  }
  return cells;
}

/** `± 0.8 %`: half of a 95 % interval over seeds, in the metric's own format ('' without one). */
function margin(name: string, s: { low: number; high: number } | null | undefined): string {
  return s === undefined || s === null ? '' : `±${formatMetric(name, (s.high - s.low) / 2)}`;
}

/** `over 5 seeds: mean ± half the 95 % interval` when the points ran on several seeds, else undefined. */
function seedNote(file: SweepFile): string | undefined {
  return file.seeds === undefined || file.seeds.length < 2
    ? undefined
    : `over ${file.seeds.length} seeds: mean ± half the 95 % interval`;
}

/** Worse → better: pale yellow to green (light enough for dark labels), whichever way the metric points. */
const RAMP = ['#fef9c3', '#d9f99d', '#86efac', '#22c55e'];

/**
 * The metric over the first two parameters (one parameter: one row). With more than two, each
 * cell shows the best value over the others — the subtitle says so.
 */
export function heatmapChart(file: SweepFile): EChartsOption {
  const [px, py] = file.params;
  const data: HeatmapSeriesOption['data'] = [...heatmapCells(file)].map(([key, p]) => {
    const [x, y] = key.split(',').map(Number);
    const spread = margin(file.metric, p.spread?.metric);
    const text = formatMetric(file.metric, p.metric);
    return {
      value: [x, y, p.metric === null ? '-' : round3(p.metric)],
      name: spread === '' ? pointName(file, p) : `${pointName(file, p)}: ${text} ${spread}`,
      label: { formatter: spread === '' ? text : `${text}\n${spread}` },
    };
  });
  const values = file.points.flatMap((p) => (p.metric === null ? [] : [p.metric]));
  const min = values.length ? Math.min(...values) : 0;
  const max = values.length ? Math.max(...values) : 1;
  const others = file.params.slice(2).map((p) => p.path);
  const subtitle = [
    others.length
      ? `each cell: the best over ${others.join(', ')}`
      : `${file.higherIsBetter ? 'higher' : 'lower'} is better`,
    seedNote(file),
  ]
    .filter(Boolean)
    .join(' · ');
  return {
    ...frame({ title: `${file.metric} by ${px.path}${py ? ` × ${py.path}` : ''}`, subtitle }),
    legend: { show: false },
    tooltip: { trigger: 'item', confine: true },
    grid: { left: 96, right: 24, top: 64, bottom: 96 },
    xAxis: {
      type: 'category',
      data: px.values.map(String),
      name: px.path,
      nameLocation: 'middle',
      nameGap: 28,
      splitArea: { show: true },
    },
    yAxis: {
      type: 'category',
      data: py ? py.values.map(String) : [''],
      name: py?.path ?? '',
      nameLocation: 'middle',
      nameGap: 72,
      splitArea: { show: true },
    },
    visualMap: {
      type: 'continuous',
      dimension: 2,
      min: round3(min),
      max: round3(max > min ? max : min + 1),
      orient: 'horizontal',
      left: 'center',
      bottom: 4,
      itemHeight: 240,
      text: [file.higherIsBetter ? 'higher (better)' : 'higher (worse)', 'lower'],
      inRange: { color: file.higherIsBetter ? RAMP : [...RAMP].reverse() },
    },
    series: [
      {
        type: 'heatmap',
        name: file.metric,
        data,
        label: { show: true, color: '#111827', fontSize: 12, lineHeight: 16 },
        itemStyle: { borderColor: '#fff', borderWidth: 1 },
      },
    ],
  };
}

/**
 * Goodput against amplification for every point; the Pareto front (goodput ↑, amplification ↓,
 * p99 ↓) stands out. Points are translucent with a white rim so one under another still shows,
 * and each is labelled; points at the same place share one label naming them all.
 */
export function paretoChart(file: SweepFile): EChartsOption {
  const at = (p: SweepPoint) => `${round3(p.figures.amplification)},${round3(p.figures.goodput)}`;
  const together = new Map<string, SweepPoint[]>();
  for (const p of file.points) together.set(at(p), [...(together.get(at(p)) ?? []), p]);
  const label = (p: SweepPoint): string => {
    const same = together.get(at(p)) ?? [p];
    if (same[0] !== p) return '';
    return same.length === 1
      ? pointName(file, p)
      : `${same.length}×: ${same.map((q) => pointName(file, q)).join(' = ')}`;
  };
  const scatter = (name: string, pareto: boolean, color: string, symbolSize: number): ScatterSeriesOption => ({
    type: 'scatter',
    name,
    color,
    symbolSize,
    itemStyle: { opacity: 0.75, borderColor: '#fff', borderWidth: 1.5 },
    label: { show: true, position: 'right', fontSize: 10, color: '#374151', formatter: '{@[3]}' },
    labelLayout: { hideOverlap: false, moveOverlap: 'shiftY' },
    data: file.points
      .filter((p) => p.pareto === pareto)
      .map((p) => ({
        value: [round3(p.figures.amplification), round3(p.figures.goodput), round3(p.figures.p99Ms / 1000), label(p)],
        name: pointName(file, p),
      })),
  });
  // With seeds: each point's 95 % intervals of goodput (vertical) and amplification (horizontal) as whiskers.
  const whiskers: LinesSeriesOption = {
    type: 'lines',
    name: '95 % interval over seeds',
    coordinateSystem: 'cartesian2d',
    silent: true,
    z: 1,
    lineStyle: { color: '#6b7280', width: 1, opacity: 0.8 },
    data: file.points.flatMap((p) => {
      const s = p.spread;
      if (s === undefined) return [];
      const x = round3(p.figures.amplification);
      const y = round3(p.figures.goodput);
      return [
        {
          coords: [
            [x, round3(s.goodput.low)],
            [x, round3(s.goodput.high)],
          ],
        },
        {
          coords: [
            [round3(s.amplification.low), y],
            [round3(s.amplification.high), y],
          ],
        },
      ];
    }),
  };
  const note = seedNote(file);
  return {
    ...frame({
      title: 'Goodput vs amplification',
      subtitle: `labels: the point (n×: points at one place) · tooltip: amplification, goodput, root p99 (s)${note === undefined ? '' : ` · whiskers: 95 % intervals`}`,
    }),
    tooltip: { trigger: 'item', confine: true },
    xAxis: { type: 'value', name: 'amplification (×)', nameLocation: 'middle', nameGap: 28, scale: true },
    yAxis: { type: 'value', name: 'goodput (roots ok /s)', nameLocation: 'middle', nameGap: 48, scale: true },
    series: [
      ...(whiskers.data?.length ? [whiskers] : []),
      scatter('other points', false, '#9ca3af', 10),
      scatter('Pareto front', true, '#2563eb', 14),
    ],
  };
}
