import type { EChartsOption } from 'echarts';

/** One chart of a report: the page draws `option` into the element with id `id`. */
export interface ChartSpec {
  id: string;
  option: EChartsOption;
}

/** The JSON a report page carries: the file it was made from and its charts. */
export interface ReportData {
  kind: 'result' | 'sweep';
  source: unknown;
  charts: ChartSpec[];
}

/** How many series a chart draws (what the browser test expects each ECharts instance to hold). */
export function seriesCount(spec: ChartSpec): number {
  const s = spec.option.series;
  return s === undefined ? 0 : Array.isArray(s) ? s.length : 1;
}
