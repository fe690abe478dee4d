import { SHED_REASONS } from '../engine/errors.js';
import type { LayerResult } from '../run/metrics/result.js';
import type { RunView } from '../run/run-view.js';
import { formatCount, formatMs, formatPercent, formatTimes } from '../report/format.js';
import { amplificationHealth, marked, successHealth } from './health.js';
import { flow, lineWidth, padEnd, padStart, seg, textWidth, type Line } from './line.js';
import { Lines } from './Lines.js';
import type { PanelProps } from './SummaryPanel.js';

/** A table column: its header, its width, and the cell of a layer (right-aligned). */
interface Column {
  head: string;
  width: number;
  cell(l: LayerResult): Line;
  /** The same figure as a labelled item, for the continuation lines when the column does not fit. */
  item(l: LayerResult): Line;
}

function right(cell: Line, width: number): Line {
  return [seg(' '.repeat(Math.max(0, width - lineWidth(cell)))), ...cell];
}

const success = (l: LayerResult): Line =>
  marked(l.ok + l.failed > 0 ? formatPercent(l.successRate) : '—', successHealth(l.successRate, l.ok + l.failed));

function shedParts(l: LayerResult): string[] {
  return SHED_REASONS.filter((r) => (l.shed[r] ?? 0) > 0).map((r) => `${r} ${formatCount(l.shed[r] ?? 0)}`);
}

function shedText(l: LayerResult): string {
  const parts = shedParts(l);
  return parts.length ? parts.join(', ') : '—';
}

/** `  shed throttle 512  budget 12` wrapped under its label. */
function shedLines(l: LayerResult, width: number): Line[] {
  const parts = shedParts(l);
  if (parts.length === 0) return [];
  return flow(
    parts.map((p, i) => (i === 0 ? [seg('shed ', 'plain'), seg(p, 'warn')] : [seg(p, 'warn')])),
    width,
    '  ',
    '       ',
  );
}

function latencyColumn(p: 'p50' | 'p95' | 'p99'): Column {
  return {
    head: p,
    width: 9,
    cell: (l) => [seg(formatMs(l.latencyMs[p]))],
    item: (l) => [seg(`${p} ${formatMs(l.latencyMs[p])}`)],
  };
}

const CORE: Column[] = [
  { head: 'calls', width: 7, cell: (l) => [seg(formatCount(l.logicalCalls))], item: () => [] },
  { head: 'attempts', width: 9, cell: (l) => [seg(formatCount(l.attempts))], item: () => [] },
  {
    head: 'amp',
    width: 10,
    cell: (l) => marked(formatTimes(l.amplification), amplificationHealth(l.amplification)),
    item: () => [],
  },
];

const OPTIONAL: Column[] = [
  { head: 'ok', width: 10, cell: success, item: (l) => [seg('ok '), ...success(l)] },
  latencyColumn('p50'),
  latencyColumn('p95'),
  latencyColumn('p99'),
];

/**
 * Per layer: logical calls, attempts, amplification, then success, p50/p95/p99 and calls shed
 * locally by reason — as table columns while they fit in `width`, the rest on indented lines
 * under each layer.
 *
 *   layer          calls  attempts     amp
 *   orchestrator     648     1,012  ! 1.56×
 *     ok ! 69.0 %  p50 640 ms  p95 4.10 s
 *     p99 5.20 s
 */
export function layersLines(view: RunView, width: number): Line[] {
  const layers = view.snapshot.layers;
  if (layers.length === 0) return [[seg('layers', 'bold'), seg(' · no calls yet', 'dim')]];
  const nameW = Math.max(5, ...layers.map((l) => textWidth(l.name)));
  const columns = [...CORE];
  let used = nameW + CORE.reduce((w, c) => w + c.width, 0);
  const rest: Column[] = [];
  for (const c of OPTIONAL) {
    if (rest.length === 0 && used + c.width <= width) {
      columns.push(c);
      used += c.width;
    } else rest.push(c);
  }
  const anyShed = layers.some((l) => Object.values(l.shed).some((n) => (n ?? 0) > 0));
  const shedW = Math.max(...layers.map((l) => textWidth(shedText(l))));
  const shedColumn = anyShed && rest.length === 0 && used + 2 + Math.max(4, shedW) <= width;
  const head: Line = [
    seg(padEnd('layer', nameW), 'bold'),
    ...columns.map((c) => seg(padStart(c.head, c.width), 'bold')),
  ];
  if (shedColumn) head.push(seg(`  shed`, 'bold'));
  const lines: Line[] = [head];
  for (const l of layers) {
    const row: Line = [seg(padEnd(l.name, nameW)), ...columns.flatMap((c) => right(c.cell(l), c.width))];
    if (shedColumn) row.push(seg(`  ${shedText(l)}`, shedText(l) === '—' ? 'dim' : 'warn'));
    lines.push(row);
    const items = rest.map((c) => c.item(l));
    if (items.length) lines.push(...flow(items, width, '  '));
    if (!shedColumn) lines.push(...shedLines(l, width));
  }
  return lines;
}

/** Per-layer calls, attempts, amplification, success, latency and local shedding for one variant. */
export function LayersPanel({ view, width, color }: PanelProps) {
  return <Lines lines={layersLines(view, width)} width={width} color={color} />;
}
