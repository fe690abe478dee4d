import type { DashboardModel, RunView } from '../run/run-view.js';
import { formatCount, formatPercent, formatRate, formatTimes } from './format.js';

/**
 * Run time for clocks and progress: `0.0s`, `12.0s`, `99.9s`, then whole seconds (`180s`).
 * Short and fixed-shaped, so a progress column does not jitter.
 */
export function formatSeconds(ms: number): string {
  if (!Number.isFinite(ms)) return '—';
  const s = Math.max(0, ms) / 1000;
  return s < 99.95 ? `${s.toFixed(1)}s` : `${Math.round(s)}s`;
}

/**
 * `[ 12.0s/60.0s  20%]`: the clock padded to the duration's width, so lines line up. It stops at
 * the duration: the drain after it is said by `state` (` · draining +5.0s`), never `[65.0s/60.0s 100%]`.
 */
function clock(model: DashboardModel): string {
  const total = formatSeconds(model.durationMs);
  const share = model.durationMs > 0 ? Math.min(1, Math.max(0, model.t / model.durationMs)) : 1;
  const pct = String(Math.floor(share * 100)).padStart(3);
  return `[${formatSeconds(Math.min(model.t, model.durationMs)).padStart(total.length + 1)}/${total} ${pct}%]`;
}

/** Past the duration, finishing in-flight work: `draining +5.0s` (how long since the duration ended). */
export function drainingFor(model: DashboardModel): string {
  return `draining +${formatSeconds(model.t - model.durationMs)}`;
}

function figures(v: RunView): string {
  const s = v.snapshot;
  const parts = [
    `goodput ${formatRate(s.goodput)}`,
    `429 ${formatPercent(s.upstream.share['429'])}`,
    `5xx ${formatPercent(s.upstream.share['5xx'])}`,
  ];
  if (s.upstream.share.timeout > 0) parts.push(`timeout ${formatPercent(s.upstream.share.timeout)}`);
  return parts.join(' · ');
}

function amplification(v: RunView): string {
  const s = v.snapshot;
  const hop1 = v.hops === undefined ? '' : 'hop 1 ';
  return `${v.name} ${hop1}${formatTimes(s.amplification)} (last 5s ${formatTimes(s.amplificationLast5s)})`;
}

/** With a gateway under test: hop 2 so far, the total, and whether hop 2 is settling. */
function hops(v: RunView): string {
  const h = v.hops;
  if (h === undefined) return '';
  const leaf = v.snapshot.layers.at(-1)?.logicalCalls ?? 0;
  const parts = [
    `hop 2 ${formatTimes(h.sent > 0 ? h.reached / h.sent : 0)} (${formatCount(h.reached)} reached)`,
    `total ${formatTimes(leaf > 0 ? h.reached / leaf : 0)}`,
  ];
  if (h.settling !== undefined)
    parts.push(`settling ${formatSeconds(h.settling.waitedMs)} (${formatCount(h.inFlight)} in flight)`);
  return ` · ${parts.join(' · ')}`;
}

function state(model: DashboardModel): string {
  if (model.variants.length > 0 && model.variants.every((v) => v.done)) return ' · done';
  if (model.t > model.durationMs) return ` · ${drainingFor(model)}`;
  return '';
}

/**
 * One plain progress line for a run that has no dashboard (not a TTY, `--no-ui`, CI): the clock,
 * then per variant its amplification (overall and over the last 5 s), goodput and the
 * upstream's 429 / 5xx (and timeout) shares. No escape codes, ever.
 *
 *   [ 12.0s/60.0s  20%] naive 27.0× (last 5s 27.0×) · goodput 0.00/s · 429 0.0 % · 5xx 99.8 % | engine …
 *
 * With a gateway under test, hop 1's amplification is labelled so, and hop 2 (what reached the
 * upstream behind the gateway), the total and hop 2's settling follow:
 *
 *   … gw hop 1 3.00× (last 5s 3.00×) · … · hop 2 3.00× (270 reached) · total 9.00× · settling 1.2s (3 in flight)
 */
export function progressLine(model: DashboardModel): string {
  const variants = model.variants.map((v) => `${amplification(v)} · ${figures(v)}${hops(v)}`).join(' | ');
  return `${clock(model)} ${variants || model.scenario}${state(model)}`;
}
