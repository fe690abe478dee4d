import type { SweepFile } from '../sweep-file.js';
import { countText, refusedSummary } from '../sweep-table.js';
import { sweepRows } from './sweep-rows.js';

const GAP = '  ';

/**
 * The points of a sweep as a plain terminal table: parameter columns left-aligned, figures
 * right-aligned, `*` marking the best metric, and a line saying what the sweep was (and one
 * about the cells it refused, when it did).
 */
export function sweepPointsTable(file: SweepFile): string {
  const t = sweepRows(file);
  const cells = [
    t.head,
    ...t.rows.map((r, i) => r.map((c, j) => (i === t.best && j === t.metricColumn ? `*${c}` : c))),
  ];
  const widths = t.head.map((_, j) => Math.max(...cells.map((r) => r[j].length)));
  const left = (j: number): boolean => j < file.params.length;
  const lines = cells.map((r) =>
    r
      .map((c, j) => (left(j) ? c.padEnd(widths[j]) : c.padStart(widths[j])))
      .join(GAP)
      .trimEnd(),
  );
  const what = `${file.scenario} · variant ${file.variant} · seed ${file.seed} · ${countText(file)} · metric ${file.metric} (${file.higherIsBetter ? 'higher' : 'lower'} is better, * best)`;
  const refused = refusedSummary(file);
  return `${what}\n\n${lines.join('\n')}\n${refused === undefined ? '' : `${refused}\n`}`;
}
