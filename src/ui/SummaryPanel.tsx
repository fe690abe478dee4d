import type { RunView } from '../run/run-view.js';
import { formatCount, formatPercent, formatRate, formatTimes } from '../report/format.js';
import { amplificationHealth, healthLabel, marked, successHealth, tone, worst, type Health } from './health.js';
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

/** A variant is as healthy as the worse of its amplification now and its success so far. */
export function variantHealth(view: RunView): Health {
  const s = view.snapshot;
  const finished = s.roots.ok + s.roots.late + s.roots.failed + (s.roots.partial ?? 0);
  return worst(amplificationHealth(s.amplificationLast5s), successHealth(s.successRate, finished));
}

/**
 * A variant's title and key figures:
 *
 *   ── naive · ✗ failing ──────────────
 *   amplification ✗ 14.2×  now ✗ 27.0×
 *   goodput 12.3/s  ok ! 61.7 %  in flight 68
 */
export function summaryLines(view: RunView, width: number): Line[] {
  const s = view.snapshot;
  const h = variantHealth(view);
  const finished = s.roots.ok + s.roots.late + s.roots.failed + (s.roots.partial ?? 0);
  const title: Line = [seg(view.name, 'bold'), seg(' · ', 'dim'), seg(healthLabel(h), tone(h))];
  if (view.done) title.push(seg(' · done', 'dim'));
  const amp: Line = [
    seg('amplification '),
    ...amplificationCell(view, 'overall'),
    seg('  now '),
    ...amplificationCell(view, 'now'),
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
