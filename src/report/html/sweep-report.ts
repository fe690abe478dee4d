import type { SweepFile } from '../sweep-file.js';
import { chartGrid, section } from './chart-grid.js';
import { chartWidth, fitLegend } from './chart-kit.js';
import type { ChartSpec } from './chart-spec.js';
import { escapeHtml } from './html-escape.js';
import { formatMetric } from './metric-format.js';
import type { ReportPage } from './result-report.js';
import { heatmapChart, paretoChart, pointName } from './sweep-charts.js';
import { countText, seedRange } from '../sweep-table.js';
import { sweepRows } from './sweep-rows.js';

function header(file: SweepFile): string {
  const params = file.params.map((p) => `${p.path} (${p.values.length})`).join(' × ');
  const meta = [
    `sweep of ${params}`,
    countText(file),
    `variant ${file.variant}`,
    file.seeds !== undefined && file.seeds.length > 1 ? `seeds ${seedRange(file.seeds)}` : `seed ${file.seed}`,
    `metric ${file.metric} (${file.higherIsBetter ? 'higher' : 'lower'} is better)`,
  ];
  return `<header><h1>stormlab sweep report: ${escapeHtml(file.scenario)}</h1><p class="meta">${escapeHtml(meta.join(' · '))}</p></header>`;
}

function bestLine(file: SweepFile, best: number): string {
  if (best < 0) return `<section class="card">No point has a value for ${escapeHtml(file.metric)}.</section>`;
  const p = file.points[best];
  return `<section class="card">Best ${escapeHtml(file.metric)}: <strong>${escapeHtml(formatMetric(file.metric, p.metric))}</strong> at <code>${escapeHtml(pointName(file, p))}</code></section>`;
}

function pointsTable(file: SweepFile): string {
  const t = sweepRows(file);
  const head = `<tr>${t.head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr>`;
  const rows = t.rows.map((cells, i) => {
    const tds = cells.map(
      (c, j) => `<td${i === t.best && j === t.metricColumn ? ' class="best"' : ''}>${escapeHtml(c)}</td>`,
    );
    return `<tr${t.pareto[i] ? ' class="pareto"' : ''}>${tds.join('')}</tr>`;
  });
  return `<div class="card scroll"><table class="points">${head}${rows.join('')}</table></div>`;
}

/** The report of a sweep: the metric's heatmap over the first two parameters, the Pareto points, every point in a table. */
export function sweepReport(file: SweepFile): ReportPage {
  const charts: ChartSpec[] = [
    { id: 'heatmap', option: heatmapChart(file) },
    { id: 'pareto', option: fitLegend(paretoChart(file), chartWidth(2)) },
  ];
  const t = sweepRows(file);
  const body = [
    header(file),
    bestLine(file, t.best),
    section(
      'Heatmap and Pareto front',
      `${file.seeds !== undefined && file.seeds.length > 1 ? `Every point ran the same scenario on the same ${file.seeds.length} seeds: each figure is their mean, ± half its 95 % interval (whiskers in the chart); points within each other's interval are not told apart.` : 'Every point ran the same scenario and seed.'} Pareto front: no other point has higher goodput, lower amplification and lower p99 at once.`,
      chartGrid(
        charts.map((chart) => ({ chart, tall: true })),
        2,
      ),
    ),
    section(
      'All points',
      'Highlighted rows are on the Pareto front; the best value of the metric is in bold.',
      pointsTable(file),
    ),
  ].join('\n');
  return { title: `stormlab sweep report: ${file.scenario}`, body, charts };
}
