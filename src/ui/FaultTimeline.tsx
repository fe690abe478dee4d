import type { ShownFault } from '../run/run-view.js';
import { formatPercent } from '../report/format.js';
import { formatSeconds } from '../report/progress-line.js';
import { seg, textWidth, type Line, type Tone } from './line.js';
import { Lines } from './Lines.js';

/** One glyph per kind, so phases read without colour: full outages solid, latency light. */
const GLYPH: Record<ShownFault['kind'], string> = {
  outage: '█',
  quota: '█',
  errors: '▓',
  reset: '▓',
  hang: '▓',
  midstream: '▓',
  // A tool's: the effect done, the answer lost.
  lost: '▓',
  latency: '▒',
  // Stream faults: a share of answers is slow, stalled, cut or odd; the rest are served.
  'slow-first-token': '▒',
  stall: '▓',
  cut: '▓',
  malformed: '▒',
  'missing-done': '▒',
  'prefill-rejected': '▒',
  'content-filter': '▒',
  'context-length': '▒',
};
const NO_FAULT = '·';
const NOW = '│';

function kindTone(kind: ShownFault['kind']): Tone {
  return kind === 'latency' ? 'warn' : 'bad';
}

/** `outage 503`, `errors 30 % 503/429`, `latency ×4`, `hang 10 %`, with `@model` when it hits one. */
export function describePhase(p: ShownFault): string {
  const statuses =
    p.status === undefined ? '' : typeof p.status === 'number' ? ` ${p.status}` : ` ${Object.keys(p.status).join('/')}`;
  const rate = p.rate < 1 ? ` ${formatPercent(p.rate)}` : '';
  const what =
    p.kind === 'latency'
      ? `latency ×${p.factor ?? 1}`
      : p.kind === 'outage'
        ? `outage${statuses || ' 503'}`
        : p.kind === 'errors'
          ? `errors${rate}${statuses}`
          : `${p.kind}${rate}`;
  return p.model === undefined ? what : `${what} @${p.model}`;
}

const active = (p: ShownFault, t: number): boolean => p.fromMs <= t && t < p.toMs;

/** What is happening now: the active phases until when, else the next one, else none. */
function status(faults: readonly ShownFault[], t: number): Line {
  const now = faults.filter((p) => active(p, t));
  if (now.length > 0) {
    const until = Math.min(...now.map((p) => p.toMs));
    return [
      seg('now ', 'bold'),
      ...now.flatMap((p, i) => [...(i ? [seg(' + ')] : []), seg(describePhase(p), kindTone(p.kind))]),
      seg(` until ${formatSeconds(until)}`, 'dim'),
    ];
  }
  const next = faults.filter((p) => p.fromMs > t).sort((a, b) => a.fromMs - b.fromMs)[0];
  if (next)
    return [
      seg('now ✓ no fault', 'good'),
      seg(` · next ${describePhase(next)} at ${formatSeconds(next.fromMs)}`, 'dim'),
    ];
  return [seg('now ✓ no fault', 'good')];
}

/** Tick steps in seconds for the bar's axis; the first giving at most 6 ticks wins. */
const TICK_STEPS = [1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 1800, 3600];

/**
 * The bar's time axis: `0s`, round steps and the end, each label starting at its column under
 * the bar (`indent` columns in), none overlapping the one before.
 */
export function timeAxisLine(durationMs: number, barW: number, indent: number): Line {
  const span = Math.max(1, durationMs) / 1000;
  const step = TICK_STEPS.find((x) => span / x <= 6) ?? Math.ceil(span / 6);
  const ticks: number[] = [];
  for (let t = 0; t < span - 1e-9; t += step) ticks.push(t);
  let text = ' '.repeat(indent);
  const place = (t: number, atEnd: boolean) => {
    const label = `${Number(t.toFixed(1))}s`;
    const col = indent + Math.min(barW - 1, Math.floor((t / span) * barW)) - (atEnd ? label.length - 1 : 0);
    if (col < text.length + (text.length > indent ? 1 : 0)) return;
    text = text.padEnd(col) + label;
  };
  for (const t of ticks) place(t, false);
  place(span, true);
  return [seg(text, 'dim')];
}

/**
 * The fault phases over the run as one bar (`█` outage/quota, `▓` errors/reset/hang/midstream,
 * `▒` latency, `·` none), `│` at the current time, then the active phase named:
 *
 *   faults ·····▒▒▒▒▒·····████████│████████·········· now outage 503 until 50.0s
 *          0s       10s       20s       30s       40s     50s
 */
export function faultLines(
  faults: readonly ShownFault[],
  t: number,
  durationMs: number,
  width: number,
  axis = true,
): Line[] {
  const label = 'faults ';
  if (faults.length === 0) return [[seg(label, 'bold'), seg('none in this scenario', 'dim')]];
  const statusLine = status(faults, t);
  const statusW = statusLine.reduce((w, s) => w + textWidth(s.text), 0);
  // The bar takes what the status leaves, 20 to 60 columns; below 20 the status is cut instead.
  const barW = Math.max(20, Math.min(60, width - textWidth(label) - 1 - statusW));
  const span = Math.max(1, durationMs);
  const cell = (i: number): ShownFault | undefined => {
    const from = (i * span) / barW;
    const to = ((i + 1) * span) / barW;
    return faults.find((p) => p.fromMs < to && p.toMs > from);
  };
  const nowCell = Math.min(barW - 1, Math.max(0, Math.floor((Math.min(t, span) / span) * barW)));
  const bar: Line = [];
  for (let i = 0; i < barW; i++) {
    const p = cell(i);
    const s =
      i === nowCell
        ? seg(NOW, 'bold')
        : p
          ? seg(GLYPH[p.kind], i < nowCell ? kindTone(p.kind) : 'dim')
          : seg(NO_FAULT, 'dim');
    const last = bar.at(-1);
    if (last && last.tone === s.tone && s.text !== NOW && last.text.at(-1) !== NOW) last.text += s.text;
    else bar.push({ ...s });
  }
  const barLine: Line = [seg(label, 'bold'), ...bar, seg(' '), ...statusLine];
  return axis ? [barLine, timeAxisLine(span, barW, textWidth(label))] : [barLine];
}

export interface FaultTimelineProps {
  faults: readonly ShownFault[];
  /** The current run time, ms. */
  t: number;
  durationMs: number;
  width: number;
  color: boolean;
  /** Draw the time axis under the bar. @default true */
  axis?: boolean;
}

/** The fault phases as a bar over the run's duration (with its time axis), the current time marked, the active phase named. */
export function FaultTimeline({ faults, t, durationMs, width, color, axis = true }: FaultTimelineProps) {
  return <Lines lines={faultLines(faults, t, durationMs, width, axis)} width={width} color={color} />;
}
