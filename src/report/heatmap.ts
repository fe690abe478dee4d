import { formatFigure } from './format.js';
import { formatMetric } from './html/metric-format.js';
import type { SweepFile } from './sweep-file.js';

/** A grid of figures to shade from bad to good. */
export interface HeatmapGrid {
  /** The first lines: what the cells are and what the axes are. */
  title: string;
  /** Row and column labels (one row labelled '' for a single row). */
  rows: string[];
  cols: string[];
  /** `cells[row][col]`; null is a cell without a figure (shown as —, not shaded). */
  cells: Array<Array<number | null>>;
  higherIsBetter: boolean;
  format: (v: number) => string;
  /** Per cell, half the width of its 95 % interval over seeds (shown as `±`); absent with one seed. */
  margins?: Array<Array<number | null>>;
  /** A line after the legend (how cells were reduced, when they were). */
  note?: string;
}

export interface HeatmapOptions {
  /** ANSI 256-colour backgrounds; otherwise shade characters beside each value. */
  color: boolean;
}

/**
 * Backgrounds from bad to good: red, orange, yellow, green, light enough that black text
 * reads on every one of them (xterm 256-colour cube entries).
 */
const RAMP = [203, 209, 215, 221, 227, 191, 155, 119, 83];
/** Without colour: a shade per level, light for bad and solid for good, doubled to be seen. */
const SHADES = ['··', '░░', '▒▒', '▓▓', '██'];
const RESET = '\x1b[0m';

const paint = (level: number, text: string): string => `\x1b[38;5;16;48;5;${RAMP[level]}m${text}${RESET}`;

/** 0 (worst of the grid) .. levels − 1 (best); every cell the top level when all are equal. */
function levelOf(v: number, lo: number, hi: number, higherIsBetter: boolean, levels: number): number {
  if (hi === lo) return levels - 1;
  const t = (v - lo) / (hi - lo);
  return Math.round((higherIsBetter ? t : 1 - t) * (levels - 1));
}

function range(cells: Array<Array<number | null>>): { lo: number; hi: number } | undefined {
  const all = cells.flat().filter((v): v is number => v !== null);
  return all.length === 0 ? undefined : { lo: Math.min(...all), hi: Math.max(...all) };
}

/**
 * The grid as text: a title, column labels over the cells, each row after its label, and a
 * legend from worst to best. In colour a cell is its value on its colour; without colour it is
 * a shade and the value, so the map still reads in a log file or with NO_COLOR.
 */
export function heatmap(grid: HeatmapGrid, opts: HeatmapOptions): string {
  const span = range(grid.cells);
  const levels = opts.color ? RAMP.length : SHADES.length;
  const margin = (i: number, j: number): string => {
    const m = grid.margins?.[i][j];
    return m === undefined || m === null ? '' : ` ±${grid.format(m)}`;
  };
  const text = grid.cells.map((row, i) => row.map((v, j) => (v === null ? '—' : `${grid.format(v)}${margin(i, j)}`)));
  const valueWidth = Math.max(...text.flat().map((t) => t.length), ...grid.cols.map((c) => c.length));
  const labelWidth = Math.max(...grid.rows.map((r) => r.length));
  const cell = (v: number | null, t: string): string => {
    const level = v === null || span === undefined ? -1 : levelOf(v, span.lo, span.hi, grid.higherIsBetter, levels);
    if (opts.color) return level < 0 ? ` ${t.padStart(valueWidth)} ` : paint(level, ` ${t.padStart(valueWidth)} `);
    return `${level < 0 ? '  ' : SHADES[level]} ${t.padStart(valueWidth)}`;
  };
  // Column labels end where the values end: after the lead-in (a space, or a shade and a space).
  const lead = opts.color ? 1 : 3;
  const tail = opts.color ? ' ' : '';
  const head = `${''.padStart(labelWidth)} ${grid.cols.map((c) => `${c.padStart(valueWidth + lead)}${tail}`).join(' ')}`;
  const rows = grid.cells.map(
    (row, i) => `${grid.rows[i].padStart(labelWidth)} ${row.map((v, j) => cell(v, text[i][j])).join(' ')}`,
  );
  const lines = [grid.title, head.trimEnd(), ...rows, legend(grid, span, opts)];
  if (grid.note !== undefined) lines.push(grid.note);
  return `${lines.join('\n')}\n`;
}

function legend(grid: HeatmapGrid, span: { lo: number; hi: number } | undefined, opts: HeatmapOptions): string {
  if (span === undefined) return 'no point has a value';
  if (span.lo === span.hi) return `every cell ${grid.format(span.lo)}`;
  const [worst, best] = grid.higherIsBetter ? [span.lo, span.hi] : [span.hi, span.lo];
  const scale = opts.color ? RAMP.map((_, i) => paint(i, '  ')).join('') : SHADES.join(' ');
  return `worst ${grid.format(worst)} ${scale} ${grid.format(best)} best`;
}

/** A value of the sweep's metric as people read it: by its unit, or (older files) by its name. */
export function formatSweepMetric(file: SweepFile, v: number | null): string {
  if (v === null) return /^recovery(Ms)?$/.test(file.metric.trim()) ? 'never' : '—';
  return file.unit === undefined ? formatMetric(file.metric, v) : formatFigure(file.unit, v);
}

/** Whether `b` is a better value of the metric than `a` (null is worse than any value). */
function better(file: SweepFile, a: number | null, b: number | null): boolean {
  if (b === null) return false;
  return a === null || (file.higherIsBetter ? b > a : b < a);
}

/**
 * The sweep's metric over its first two parameters: rows the first, columns the second (one
 * parameter: a single row). With more parameters each cell holds the best value over the
 * others, and a note says so.
 */
export function sweepGrid(file: SweepFile): HeatmapGrid {
  const [first, second] = file.params;
  const rows = second === undefined ? [''] : first.values.map(String);
  const cols = (second ?? first).values.map(String);
  const cells: Array<Array<number | null>> = rows.map(() => cols.map(() => null));
  const margins: Array<Array<number | null>> = rows.map(() => cols.map(() => null));
  const seen = rows.map(() => cols.map(() => false));
  for (const p of file.points) {
    const r = second === undefined ? 0 : first.values.indexOf(p.values[0]);
    const c = second === undefined ? first.values.indexOf(p.values[0]) : second.values.indexOf(p.values[1]);
    if (r < 0 || c < 0) continue;
    if (!seen[r][c] || better(file, cells[r][c], p.metric)) {
      cells[r][c] = p.metric;
      const m = p.spread?.metric;
      margins[r][c] = m === undefined || m === null ? null : (m.high - m.low) / 2;
    }
    seen[r][c] = true;
  }
  const axes = second === undefined ? `columns ${first.path}` : `rows ${first.path} · columns ${second.path}`;
  const others = file.params.slice(2);
  // A cell no point was simulated in: every combination there was refused.
  const refusedCells = (file.refused?.length ?? 0) > 0 && seen.some((r) => r.some((s) => !s));
  const notes = [
    ...(others.length === 0
      ? []
      : [`each cell: the best over ${others.map((p) => `${p.path} (${p.values.length} values)`).join(', ')}`]),
    ...(refusedCells ? ['— where the values are refused (see the table)'] : []),
    ...(file.seeds === undefined
      ? []
      : [`each cell: the mean over ${file.seeds.length} seeds ± half its 95 % interval`]),
  ];
  return {
    title: `heatmap of ${file.metric} (${file.higherIsBetter ? 'higher' : 'lower'} is better)\n${axes}`,
    rows,
    cols,
    cells,
    higherIsBetter: file.higherIsBetter,
    format: (v) => formatSweepMetric(file, v),
    ...(file.seeds === undefined ? {} : { margins }),
    note: notes.length === 0 ? undefined : notes.join('\n'),
  };
}

/** The heatmap of a sweep's metric (see `sweepGrid`). */
export function sweepHeatmap(file: SweepFile, opts: HeatmapOptions): string {
  return heatmap(sweepGrid(file), opts);
}
