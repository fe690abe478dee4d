import type { EChartsOption } from 'echarts';

/** Variant colours, in the order of `variants` (naive first in the bundled scenarios: red, then blue). */
export const VARIANT_COLORS = ['#dc2626', '#2563eb', '#16a34a', '#9333ea', '#ea580c', '#0891b2'];

/**
 * A variant's colour, the same in every chart of the report. Nothing else in a report is drawn
 * in these hues: other series are greys, ambers and browns, so a red line is always naive.
 */
export function variantColor(i: number): string {
  return VARIANT_COLORS[((i % VARIANT_COLORS.length) + VARIANT_COLORS.length) % VARIANT_COLORS.length];
}

/** `#rrggbb` at `alpha` as `rgba(…)`: one variant's colour in lighter shades. */
export function shade(hex: string, alpha: number): string {
  const n = Number.parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
}

/** Three significant digits: tooltips show `1.07`, not `1.0714285714285714`. */
export function round3(x: number): number {
  return x === 0 || !Number.isFinite(x) ? x : Number(x.toPrecision(3));
}

/** The smallest 1, 2, 2.5 or 5 × 10ⁿ at or above `x`: a shared axis top that ticks evenly. */
export function niceMax(x: number): number | undefined {
  if (!(x > 0) || !Number.isFinite(x)) return undefined;
  const decade = 10 ** Math.floor(Math.log10(x));
  const step = [1, 2, 2.5, 5, 10].find((m) => m * decade >= x * (1 - 1e-9)) ?? 10;
  return step * decade;
}

/** The largest finite value of some series (0 if none). */
export function maxOf(...series: ReadonlyArray<ReadonlyArray<number | null>>): number {
  let max = 0;
  for (const s of series) for (const v of s) if (v !== null && Number.isFinite(v) && v > max) max = v;
  return max;
}

export interface Frame {
  title: string;
  /** A line under the title (what the chart leaves out, what the shading means). */
  subtitle?: string;
}

/**
 * What every chart shares: title top left, legend under it, room for axis names, no
 * animation (the page is a document; screenshots and the browser test see the final frame).
 * `fitLegend` then makes room for the legend's rows.
 */
export function frame(f: Frame): EChartsOption {
  return {
    animation: false,
    title: {
      text: f.title,
      subtext: f.subtitle,
      left: 8,
      top: 4,
      textStyle: { fontSize: 14, fontWeight: 600 },
      subtextStyle: { fontSize: 12 },
    },
    legend: { top: legendTop(f.subtitle), left: 8, right: 8 },
    grid: { left: 64, right: 24, top: legendTop(f.subtitle) + 40, bottom: 48 },
    tooltip: { trigger: 'axis', confine: true },
  };
}

const legendTop = (subtitle: string | undefined): number => (subtitle === undefined ? 30 : 48);

/** Width of the page's content (its max width less padding), px. */
const PAGE = 1200;

/** About how wide a chart is when `columns` share a row of the page, px. */
export function chartWidth(columns: number): number {
  const n = Math.max(1, columns);
  return (PAGE - 12 * (n - 1)) / n - 16;
}

/**
 * Rows a wrapping legend takes for these names in a chart `width` px wide: an item is its
 * icon and gaps (~40 px) and ~7 px a character of 12 px text.
 */
export function legendRows(names: readonly string[], width: number): number {
  let rows = 1;
  let used = 0;
  for (const name of names) {
    const w = 40 + name.length * 7;
    if (used > 0 && used + w > width - 16) {
      rows++;
      used = 0;
    }
    used += w;
  }
  return rows;
}

const LEGEND_ROW = 22;

/**
 * Moves the (first) grid down under a legend that wraps onto several rows in a chart `width`
 * px wide, so the legend never covers the plot. Charts without a legend are left as they are.
 */
export function fitLegend(option: EChartsOption, width: number): EChartsOption {
  const legend = option.legend as { show?: boolean; top?: number } | undefined;
  if (legend === undefined || legend.show === false) return option;
  const series = Array.isArray(option.series) ? option.series : option.series === undefined ? [] : [option.series];
  const names = [...new Set(series.map((s) => String(s.name ?? '')))];
  const top = (legend.top ?? 30) + legendRows(names, width) * LEGEND_ROW + 18;
  const grids = Array.isArray(option.grid) ? option.grid : [option.grid ?? {}];
  const [first, ...rest] = grids;
  const grid = [{ ...first, top }, ...rest];
  return { ...option, grid: Array.isArray(option.grid) ? grid : grid[0] };
}
