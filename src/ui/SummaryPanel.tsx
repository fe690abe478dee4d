import type { RunView } from '../run/run-view.js';
import { formatCount, formatPercent, formatRate, formatTimes } from '../report/format.js';
import {
  amplificationHealth,
  HEALTH_SYMBOL,
  HEALTH_WORD,
  marked,
  successHealth,
  tone,
  UPSTREAM_WORD,
  type Health,
} from './health.js';
import { lineWidth, rule, seg, textWidth, type Line } from './line.js';
import { Lines } from './Lines.js';

/**
 * Amplification overall or over the last 5 s, marked with its health; `—` before any logical
 * leaf call (0 upstream attempts for 0 calls is no figure; for 100 calls it is a perfect one).
 */
export function amplificationCell(view: RunView, which: 'overall' | 'now'): Line {
  const s = view.snapshot;
  const x = which === 'overall' ? s.amplification : s.amplificationLast5s;
  const leafCalls = s.layers.at(-1)?.logicalCalls ?? 0;
  if (!Number.isFinite(x) || (x === 0 && leafCalls === 0)) return [seg('—', 'dim')];
  return marked(formatTimes(x), amplificationHealth(x));
}

/**
 * With a gateway under test: hop 2's amplification (what reached the upstream per request the
 * driver sent the gateway) and the total (per logical leaf call: hop 1 × hop 2), so far.
 */
export function hopFigures(view: RunView): { hop2: number; total: number } | undefined {
  const h = view.hops;
  if (h === undefined) return undefined;
  const leafCalls = view.snapshot.layers.at(-1)?.logicalCalls ?? 0;
  return { hop2: h.sent > 0 ? h.reached / h.sent : 0, total: leafCalls > 0 ? h.reached / leafCalls : 0 };
}

/** A hop figure marked with its health, `—` before any request. */
export function hopCell(view: RunView, which: 'hop2' | 'total'): Line {
  const f = hopFigures(view);
  if (f === undefined || (view.hops?.sent ?? 0) === 0) return [seg('—', 'dim')];
  return marked(formatTimes(f[which]), amplificationHealth(f[which]));
}

/**
 * The variant's two verdicts: is the upstream protected (amplification over the last 5 s, or
 * overall once nothing is left in flight; with a gateway under test the total, what reached the
 * upstream behind it) and are its tasks succeeding (success so far)?
 */
export function variantHealth(view: RunView): { upstream: Health; tasks: Health } {
  const s = view.snapshot;
  const finished = s.roots.ok + s.roots.late + s.roots.failed + (s.roots.partial ?? 0);
  const now = amplificationHealth(s.amplificationLast5s);
  const hops = hopFigures(view);
  return {
    upstream:
      hops !== undefined && (view.hops?.sent ?? 0) > 0
        ? amplificationHealth(hops.total)
        : now === 'none'
          ? amplificationHealth(s.amplification)
          : now,
    tasks: successHealth(s.successRate, finished),
  };
}

/** `upstream ✓ protected`, `tasks ✗ failing` (or `✓ upstream`, `✗ tasks` when `short`); `waiting` before any figure. */
function verdict(what: 'upstream' | 'tasks', h: Health, short: boolean): Line {
  if (h === 'none') return [seg(`${what} waiting`, 'dim')];
  const word = (what === 'upstream' ? UPSTREAM_WORD : HEALTH_WORD)[h];
  return short
    ? [seg(`${HEALTH_SYMBOL[h]} ${what}`, tone(h))]
    : [seg(`${what} `), seg(`${HEALTH_SYMBOL[h]} ${word}`, tone(h))];
}

/**
 * A variant's title and key figures:
 *
 *   ── engine · upstream ✓ protected · tasks ✗ failing ──
 *   amplification ✓ 0.01×  now ✓ 0.00×
 *   goodput 0.00/s  ok ✗ 0.0 %  in flight 68
 */
export function summaryLines(view: RunView, width: number): Line[] {
  const s = view.snapshot;
  const h = variantHealth(view);
  const finished = s.roots.ok + s.roots.late + s.roots.failed + (s.roots.partial ?? 0);
  const titleOf = (short: boolean): Line => [
    seg(view.name, 'bold'),
    seg(' · ', 'dim'),
    ...verdict('upstream', h.upstream, short),
    seg(' · ', 'dim'),
    ...verdict('tasks', h.tasks, short),
    ...(view.done ? [seg(' · done', 'dim')] : []),
  ];
  // The words where they fit, else the symbols alone: the rule stays one line.
  const long = titleOf(false);
  const title = lineWidth(long) + 4 <= width ? long : titleOf(true);
  // With a gateway under test, hop 1's figures say so and the total follows.
  const amp: Line = [
    seg(view.hops === undefined ? 'amplification ' : 'hop 1 '),
    ...amplificationCell(view, 'overall'),
    seg('  now '),
    ...amplificationCell(view, 'now'),
    ...(view.hops === undefined ? [] : [seg('  total '), ...hopCell(view, 'total')]),
  ];
  const figures: Line = [
    seg('goodput '),
    seg(formatRate(s.goodput), tone(successHealth(s.successRate, finished))),
    seg('  ok '),
    ...marked(finished > 0 ? formatPercent(s.successRate) : '—', successHealth(s.successRate, finished)),
  ];
  // Roots in flight only where they fit: the line stays one line at any width.
  const inFlight = seg(`  in flight ${formatCount(s.roots.unfinished)}`, 'dim');
  if (lineWidth(figures) + textWidth(inFlight.text) <= width) figures.push(inFlight);
  return [rule(title, width), amp, figures];
}

export interface PanelProps {
  view: RunView;
  /** Columns the panel may use. */
  width: number;
  /** False: plain text, no escape codes (NO_COLOR). */
  color: boolean;
}

/** A variant's title rule (name and health word) with its amplification, goodput and success. */
export function SummaryPanel({ view, width, color }: PanelProps) {
  return <Lines lines={summaryLines(view, width)} width={width} color={color} />;
}
