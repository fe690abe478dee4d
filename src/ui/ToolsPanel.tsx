import type { RunView } from '../run/run-view.js';
import type { RunSnapshot } from '../run/metrics/result.js';
import { formatCount, formatMs, formatPercent, formatRate } from '../report/format.js';
import { flow, seg, type Line } from './line.js';
import { Lines } from './Lines.js';
import type { PanelProps } from './SummaryPanel.js';

/** One tool's items: executions, duplicates (red when a side effect was done twice), conflicts, degraded, breaker. */
function toolItems(view: RunView, t: NonNullable<RunSnapshot['tools']>[number]): Line[] {
  const breaker = view.toolBreakers?.[t.name];
  return [
    [seg(t.name, 'bold')],
    [seg(`exec ${formatCount(t.executions)}`)],
    [seg('dup '), seg(formatCount(t.duplicates), t.sideEffect && t.duplicates > 0 ? 'bad' : 'good')],
    [seg(`conflicts ${formatCount(t.conflicts)}`)],
    [seg('degraded '), seg(formatPercent(t.degradedShare), t.degradedShare > 0 ? 'warn' : 'plain')],
    ...(breaker === undefined
      ? []
      : [[seg('breaker '), seg(breaker, breaker === 'closed' ? 'good' : breaker === 'open' ? 'bad' : 'warn')]]),
  ];
}

/** Root tasks that ended degraded (a draft instead of the send) or partial (a stage out of budget). */
function rootLines(s: RunSnapshot, width: number): Line[] {
  const { degraded, partial } = s.roots;
  if (degraded === undefined && partial === undefined) return [];
  const finished = s.roots.ok + s.roots.late + s.roots.failed + (partial ?? 0);
  const share = (n: number) => (finished > 0 ? ` (${formatPercent(n / finished)})` : '');
  const items: Line[] = [[seg('roots', 'bold')]];
  if (degraded !== undefined)
    items.push([seg('degraded '), seg(`${formatCount(degraded)}${share(degraded)}`, degraded > 0 ? 'warn' : 'plain')]);
  if (partial !== undefined)
    items.push([seg('partial '), seg(`${formatCount(partial)}${share(partial)}`, partial > 0 ? 'warn' : 'plain')]);
  return flow(items, width, '', '  ');
}

/** The entry limit: submissions refused (each with a retry-after hint), then each tenant's goodput and refusals. */
function entryLines(s: RunSnapshot, width: number): Line[] {
  const tenants = s.tenants;
  if (tenants === undefined) return [];
  const refused = tenants.reduce((n, t) => n + t.refused, 0);
  const items: Line[] = [
    [seg('entry', 'bold')],
    [seg('refused '), seg(formatCount(refused), refused > 0 ? 'warn' : 'plain')],
    ...tenants.map(
      (t): Line => [
        seg(`${t.name} `),
        seg(formatRate(t.goodput), t.successRate >= 0.9 ? 'good' : t.successRate >= 0.5 ? 'warn' : 'bad'),
        seg(t.refused > 0 ? ` refused ${formatCount(t.refused)}` : '', 'dim'),
      ],
    ),
  ];
  return flow(items, width, '', '  ');
}

/** The inference limit: attempts queued, the wait they were told to expect, those that gave up or fell back. */
function inferenceLines(s: RunSnapshot, width: number): Line[] {
  const q = s.inference;
  if (q === undefined) return [];
  const items: Line[] = [
    [seg('inference', 'bold')],
    [seg(`queued ${formatCount(q.queued)}`)],
    [seg(`est. wait ${formatMs(q.estimatedWaitMs.mean)}`), seg(` (max ${formatMs(q.estimatedWaitMs.max)})`, 'dim')],
    [seg('gave up '), seg(formatCount(q.gaveUp), q.gaveUp > 0 ? 'warn' : 'plain')],
    [seg(`fallback ${formatCount(q.fallbacks)}`)],
  ];
  return flow(items, width, '', '  ');
}

/**
 * The tool world of one variant: each tool's executions of its effect, duplicates (red when a
 * side effect was done twice), idempotency conflicts, degraded share and breaker; root tasks
 * that ended degraded or partial; the entry limit's refusals per tenant and the inference
 * queue's estimated waits. Items wrap to the width. Nothing for a scenario with none of these.
 *
 *   tools · users 599 submissions
 *   gmail.send  exec 1,050  dup 477  conflicts 0  degraded 0.0 %  breaker closed
 *   roots  degraded 0 (0.0 %)
 */
export function toolsLines(view: RunView, width: number): Line[] {
  const s = view.snapshot;
  const tools = s.tools ?? [];
  const lines: Line[] = [];
  if (tools.length > 0) {
    lines.push([
      seg('tools', 'bold'),
      seg(s.users ? ` · users ${formatCount(s.users.submissions)} submissions` : '', 'dim'),
    ]);
    for (const t of tools) lines.push(...flow(toolItems(view, t), width, '', '  '));
  }
  lines.push(...rootLines(s, width), ...entryLines(s, width), ...inferenceLines(s, width));
  return lines;
}

/** Tools, degraded and partial roots, entry and inference limits for one variant. */
export function ToolsPanel({ view, width, color }: PanelProps) {
  const lines = toolsLines(view, width);
  return lines.length === 0 ? null : <Lines lines={lines} width={width} color={color} />;
}
