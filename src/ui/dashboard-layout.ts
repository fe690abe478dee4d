import type { DashboardModel, RunView } from '../run/run-view.js';
import { engineLines } from './EnginePanel.js';
import { layersLines } from './LayersPanel.js';
import { summaryLines } from './SummaryPanel.js';
import { toolsLines } from './ToolsPanel.js';
import { upstreamLines } from './UpstreamPanel.js';

/** Panels under each variant's summary. */
export type PanelName = 'upstream' | 'engine' | 'layers' | 'tools';

/** One screen of the dashboard: which panels, for which variants (indexes into `variants`). */
export interface DashboardView {
  name: string;
  panels: PanelName[];
  variants: number[];
}

export interface DashboardLayout {
  views: DashboardView[];
  /** Variant columns side by side. */
  columns: number;
  columnWidth: number;
}

/** Narrowest useful variant column; the gap between columns. */
export const MIN_COLUMN = 39;
export const GAP = 2;

/** Panel groupings, fewest views first; every view also shows each variant's summary. */
const GROUPINGS: Array<Array<{ name: string; panels: PanelName[] }>> = [
  // The tools panel goes with the layers (it is empty without tools: the views stay the same).
  [{ name: 'all', panels: ['upstream', 'engine', 'layers', 'tools'] }],
  [
    { name: 'overview', panels: ['upstream', 'engine'] },
    { name: 'layers', panels: ['layers', 'tools'] },
  ],
  [
    { name: 'upstream', panels: ['upstream'] },
    { name: 'engine', panels: ['engine'] },
    { name: 'layers', panels: ['layers', 'tools'] },
  ],
];

/** Upstream's narrowest (its share and queue lines), the engine table's narrowest and widest. */
const UPSTREAM_MIN = 36;
const ENGINE_MIN = 39;
const ENGINE_MAX = 46;

/**
 * Widths of upstream and engine side by side in a column `[upstream, engine]`, or undefined
 * when the column is too narrow to pair them. The engine table gets what it needs, up to
 * ENGINE_MAX; the upstream's sparklines take the rest.
 */
export function pairWidths(columnWidth: number): [number, number] | undefined {
  if (columnWidth < UPSTREAM_MIN + GAP + ENGINE_MIN) return undefined;
  const engine = Math.min(ENGINE_MAX, columnWidth - GAP - UPSTREAM_MIN);
  return [columnWidth - GAP - engine, engine];
}

/** Rows a variant's column takes: summary, upstream and engine (paired when wide), layers. */
export function columnHeight(view: RunView, panels: readonly PanelName[], width: number): number {
  const pair = pairWidths(width);
  const has = (p: PanelName) => panels.includes(p);
  let h = summaryLines(view, width).length;
  if (pair && has('upstream') && has('engine'))
    h += Math.max(upstreamLines(view, pair[0]).length, engineLines(view, pair[1]).length);
  else {
    if (has('upstream')) h += upstreamLines(view, width).length;
    if (has('engine')) h += engineLines(view, width).length;
  }
  if (has('layers')) h += layersLines(view, width).length;
  if (has('tools')) h += toolsLines(view, width).length;
  return h;
}

/** `variants` cut into rows of `columns`. */
export function gridRows<T>(items: readonly T[], columns: number): T[][] {
  const rows: T[][] = [];
  for (let i = 0; i < items.length; i += columns) rows.push(items.slice(i, i + columns));
  return rows;
}

/** Rows a view takes: its grid rows of variant columns, a blank line between rows. */
export function viewHeight(
  model: DashboardModel,
  view: DashboardView,
  layout: Pick<DashboardLayout, 'columns' | 'columnWidth'>,
): number {
  const rows = gridRows(view.variants, layout.columns);
  const heights = rows.map((row) =>
    Math.max(0, ...row.map((i) => columnHeight(model.variants[i], view.panels, layout.columnWidth))),
  );
  return heights.reduce((a, b) => a + b, 0) + Math.max(0, rows.length - 1);
}

/**
 * The views for a model in `width` × `bodyHeight`: variants side by side in as many columns
 * of at least MIN_COLUMN as fit, and the fewest views whose contents fit the height — all
 * panels on one screen; else overview + layers; else one panel a view. All variants stay on
 * every view (in rows under each other) if that fits; otherwise each view is paged by as many
 * variants as fit side by side. When nothing fits, the last arrangement is clipped.
 */
export function dashboardLayout(model: DashboardModel, width: number, bodyHeight: number): DashboardLayout {
  const n = Math.max(1, model.variants.length);
  const columns = Math.max(1, Math.min(n, Math.floor((width + GAP) / (MIN_COLUMN + GAP))));
  const columnWidth = Math.floor((width - GAP * (columns - 1)) / columns);
  const all = model.variants.map((_, i) => i);
  const pages = gridRows(all, columns);
  const candidates: DashboardView[][] = GROUPINGS.map((g) => g.map((v) => ({ ...v, variants: all })));
  if (pages.length > 1) {
    for (const g of GROUPINGS) {
      candidates.push(
        g.flatMap((v) =>
          pages.map((page) => ({
            ...v,
            name: `${v.name} · ${page.map((i) => model.variants[i].name).join(', ')}`,
            variants: page,
          })),
        ),
      );
    }
  }
  const fits = (views: DashboardView[]) =>
    views.every((v) => viewHeight(model, v, { columns, columnWidth }) <= bodyHeight);
  const views = candidates.find(fits) ?? candidates[candidates.length - 1];
  return { views, columns, columnWidth };
}
