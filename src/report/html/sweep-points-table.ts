import type { SweepFile } from '../sweep-file.js';
import { sweepRows } from './sweep-rows.js';

const GAP = '  ';

/**
 * The points of a sweep as a plain terminal table: parameter columns left-aligned, figures
 * right-aligned, `*` marking the best metric, and a line saying what the sweep was.
 */
export function sweepPointsTable(file: SweepFile): string {
  const t = sweepRows(file);
  const cells = [t.head, ...t.rows.map((r, i) => r.map((c, j) => (i === t.best && j === t.metricColumn ? `*${c}` : c)))];
  const widths = t.head.map((_, j) => Math.max(...cells.map((r) => r[j].length)));
  const left = (j: number): boolean => j < file.params.length;
  const lines = cells.map((r) => r.map((c, j) => (left(j) ? c.padEnd(widths[j]) : c.padStart(widths[j]))).join(GAP).trimEnd());
  const what = `${file.scenario} · variant ${file.variant} · seed ${file.seed} · ${file.points.length} points · metric ${file.metric} (${file.higherIsBetter ? 'higher' : 'lower'} is better, * best)`;
  return `${what}\n\n${lines.join('\n')}\n`;
}
