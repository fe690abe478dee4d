import type { ChartSpec } from './chart-spec.js';
import { seriesCount } from './chart-spec.js';
import { escapeHtml } from './html-escape.js';

/** A cell of a chart grid: a chart, or a note where a chart would make no sense. */
export type GridCell = { chart: ChartSpec; tall?: boolean } | { note: string };

/** The element a chart is drawn into; `data-series` says how many series it should show. */
export function chartBox(spec: ChartSpec, tall = false): string {
  return `<div class="chart${tall ? ' tall' : ''}" id="${escapeHtml(spec.id)}" data-series="${seriesCount(spec)}"></div>`;
}

/** Cells side by side, at most `columns` a row (at 1280 px, three charts a row still read). */
export function chartGrid(cells: readonly GridCell[], columns = Math.min(cells.length, 3)): string {
  const inner = cells.map(
    (c) => `<div>${'chart' in c ? chartBox(c.chart, c.tall) : `<div class="empty">${escapeHtml(c.note)}</div>`}</div>`,
  );
  return `<div class="grid" style="grid-template-columns: repeat(${Math.max(1, columns)}, minmax(0, 1fr))">${inner.join('')}</div>`;
}

/** A section: heading, a note on how to read it, the grid. */
export function section(title: string, note: string, grid: string): string {
  return `<h2>${escapeHtml(title)}</h2>\n<p class="note">${escapeHtml(note)}</p>\n${grid}`;
}
