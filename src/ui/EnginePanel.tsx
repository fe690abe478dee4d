import type { BreakerSnapshot } from '../engine/circuit-breaker.js';
import type { GuardSnapshot } from '../engine/guard-core.js';
import type { RunView } from '../run/run-view.js';
import { formatCount, formatPercent, sig3 } from '../report/format.js';
import { formatSeconds } from '../report/progress-line.js';
import { HEALTH_SYMBOL, tone, type Health } from './health.js';
import { cut, flow, padEnd, padStart, seg, textWidth, type Line } from './line.js';
import { Lines } from './Lines.js';
import type { PanelProps } from './SummaryPanel.js';

type Target = GuardSnapshot['targets'][number];
type Limit = GuardSnapshot['limits'][number];

const BREAKER_HEALTH: Record<BreakerSnapshot['state'], Health> = { closed: 'good', half_open: 'warn', open: 'bad' };
const BREAKER_WORD: Record<BreakerSnapshot['state'], string> = {
  closed: 'closed',
  half_open: 'half-open',
  open: 'open',
};

/** Dropping nothing is healthy; dropping up to half is degraded; more is an upstream failing. */
function dropHealth(p: number): Health {
  return p <= 0.001 ? 'good' : p <= 0.5 ? 'warn' : 'bad';
}

/** Retries the budget still allows: at least one healthy, some degraded, none failing. */
function budgetHealth(balance: number): Health {
  return balance >= 1 ? 'good' : balance > 0 ? 'warn' : 'bad';
}

function fillHealth(available: number, capacity: number, debt: number): Health {
  if (debt > 0) return 'bad';
  const fill = capacity > 0 ? available / capacity : 0;
  return fill >= 0.5 ? 'good' : fill >= 0.1 ? 'warn' : 'bad';
}

/** `████░░░░` — `available / capacity` of a bucket. */
export function fillBar(available: number, capacity: number, width: number): string {
  const fill = capacity > 0 ? Math.min(1, Math.max(0, available / capacity)) : 0;
  const full = Math.round(fill * width);
  return '█'.repeat(full) + '░'.repeat(width - full);
}

/**
 * Share of calls sent to a target other than the first (the fallbacks), from the throttles'
 * request counts over their window, or the breakers' call counts; undefined with one target.
 */
export function fallbackShare(guard: GuardSnapshot): number | undefined {
  if (guard.targets.length < 2) return undefined;
  const counts = guard.targets.map((t) => t.throttle?.requests ?? t.breaker?.calls ?? 0);
  const total = counts.reduce((a, b) => a + b, 0);
  return total > 0 ? (total - counts[0]) / total : 0;
}

/**
 * `open 3.2s ×2`: the state as a word (it reads without colour), its time in state, repeated
 * trips; `open 3/4 3.2s` when 3 of a layer's 4 replicas have their breaker open.
 */
function breakerCell(b: BreakerSnapshot, at: number, replicas?: { n: number; count: number }): Line {
  const h = BREAKER_HEALTH[b.state];
  const of = replicas !== undefined && b.state !== 'closed' ? ` ${replicas.n}/${replicas.count}` : '';
  const cell: Line = [seg(`${BREAKER_WORD[b.state]}${of} ${formatSeconds(at - b.since)}`, tone(h))];
  if (b.trips > 1) cell.push(seg(` ×${b.trips}`, 'dim'));
  return cell;
}

/** Fits `-0.200` and `>99.9 %` with a space before. */
const BUDGET_W = 7;
const DROP_W = 7;

/** `name  budget  drop  breaker` — empty cells where the layer or target has no such part. */
function row(
  name: Line,
  nameW: number,
  budget: GuardSnapshot['budget'] | undefined,
  target: Target | undefined,
  at: number,
  replicas?: { n: number; count: number },
): Line {
  const line: Line = [...name, seg(' '.repeat(Math.max(0, nameW - name.reduce((w, s) => w + textWidth(s.text), 0))))];
  line.push(
    budget
      ? seg(padStart(sig3(budget.balance), BUDGET_W), tone(budgetHealth(budget.balance)))
      : seg(' '.repeat(BUDGET_W)),
  );
  const p = target?.throttle?.dropProbability;
  line.push(p === undefined ? seg(' '.repeat(DROP_W)) : seg(padStart(formatPercent(p), DROP_W), tone(dropHealth(p))));
  if (target?.breaker) line.push(seg(' '), ...breakerCell(target.breaker, at, replicas));
  return line;
}

function limitLabel(l: Limit): string {
  return l.key === undefined ? l.dimension : `${l.dimension} ${l.key}`;
}

/** Buckets shown per engine layer; keyed dimensions can have one per tenant. */
const MAX_LIMITS = 4;

function limitLines(limits: readonly Limit[], width: number): Line[] {
  const shown = limits.slice(0, MAX_LIMITS);
  const values = shown.map((l) => `${formatCount(l.available)}/${formatCount(l.capacity)}`);
  const valueW = Math.max(...values.map(textWidth));
  // Labels are cut (ending in …) only to leave the bar 8 columns.
  const labelW = Math.min(
    Math.max(...shown.map((l) => textWidth(limitLabel(l)))),
    Math.max(10, width - 2 - 1 - 8 - 1 - valueW),
  );
  const barW = Math.max(4, Math.min(20, width - 2 - labelW - 2 - valueW));
  const lines = shown.map((l, i): Line => {
    const label = textWidth(limitLabel(l)) > labelW ? `${cut(limitLabel(l), labelW - 1)}…` : limitLabel(l);
    const h = fillHealth(l.available, l.capacity, l.debt);
    const line: Line = [
      seg(`  ${padEnd(label, labelW)} `),
      seg(fillBar(l.available, l.capacity, barW), tone(h)),
      seg(` ${values[i]}`),
    ];
    if (l.debt > 0) line.push(seg(` ${HEALTH_SYMBOL.bad} debt ${formatCount(l.debt)}`, 'bad'));
    return line;
  });
  if (limits.length > MAX_LIMITS) lines.push([seg(`  +${limits.length - MAX_LIMITS} more buckets`, 'dim')]);
  return lines;
}

/** Fallback share and concurrency of one guard, as indented items. */
function extraLines(guard: GuardSnapshot, width: number): Line[] {
  const items: Line[] = [];
  const fallback = fallbackShare(guard);
  if (fallback !== undefined)
    items.push([seg('fallback '), seg(formatPercent(fallback), fallback > 0 ? 'warn' : 'plain')]);
  if (guard.concurrency)
    items.push([
      seg(`in flight ${formatCount(guard.concurrency.inFlight)}, ${formatCount(guard.concurrency.queued)} queued`),
    ]);
  return items.length ? flow(items, width, '  ') : [];
}

/**
 * The engine at each layer that runs it, as a table: the retry-budget balance (retries still
 * allowed), the throttle's drop probability and the breaker's state with its time in state —
 * one row per layer, or a row per target under the layer when it has several (then also the
 * fallback share). Buckets follow as `available/capacity` bars.
 *
 *   engine        budget   drop breaker
 *   orchestrator     136  0.0 % closed 32.4s
 *   llm            -0.20
 *     primary            62.0 % open 3.2s ×2
 *     fallback            0.0 % closed 32.4s
 *     fallback 22.5 %  in flight 12, 3 queued
 *     requests/s       ██░░░░░░ 14/50
 *
 * A layer run as several replicas is named with their number (`gateway ×4`, `×4 shared` when
 * they share their state) and shows their state merged: budgets and buckets summed (read once
 * when shared), the mean drop probability, and the worst breaker state with how many replicas
 * are in it (`open 3/4 2.1s`).
 */
export function engineLines(view: RunView, width: number): Line[] {
  if (view.engines.length === 0) return [[seg('engine', 'bold'), seg(' · off', 'dim')]];
  const nameW = Math.max(
    6,
    ...view.engines.flatMap((e) => [
      textWidth(e.layer) + textWidth(replicaTag(e.replicas)),
      ...(e.guard.targets.length > 1 ? e.guard.targets.map((t) => 2 + textWidth(t.name)) : []),
    ]),
  );
  const lines: Line[] = [
    [
      seg(padEnd('engine', nameW), 'bold'),
      seg(padStart('budget', BUDGET_W), 'bold'),
      seg(padStart('drop', DROP_W), 'bold'),
      seg(' breaker', 'bold'),
    ],
  ];
  for (const { layer, guard, replicas } of view.engines) {
    const single = guard.targets.length <= 1;
    const tag = replicaTag(replicas);
    const name: Line = tag ? [seg(layer, 'bold'), seg(tag, 'dim')] : [seg(layer, 'bold')];
    const of = (i: number) => (replicas ? { n: replicas.breakers[i] ?? 0, count: replicas.count } : undefined);
    lines.push(
      row(name, nameW, guard.budget, single ? guard.targets[0] : undefined, guard.at, single ? of(0) : undefined),
    );
    if (!single)
      guard.targets.forEach((t, i) => lines.push(row([seg(`  ${t.name}`)], nameW, undefined, t, guard.at, of(i))));
    lines.push(...extraLines(guard, width), ...(guard.limits.length ? limitLines(guard.limits, width) : []));
  }
  return lines;
}

/** ` ×4` after a replicated layer's name, ` ×4 shared` when its replicas share their state; '' for one. */
function replicaTag(replicas: RunView['engines'][number]['replicas']): string {
  return replicas === undefined ? '' : ` ×${replicas.count}${replicas.state === 'shared' ? ' shared' : ''}`;
}

/** Engine state for one variant (one line saying it is off for a variant without it). */
export function EnginePanel({ view, width, color }: PanelProps) {
  return <Lines lines={engineLines(view, width)} width={width} color={color} />;
}
