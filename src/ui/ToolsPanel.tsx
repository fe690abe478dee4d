import type { RunView } from '../run/run-view.js';
import { formatCount, formatPercent } from '../report/format.js';
import { seg, type Line } from './line.js';
import { Lines } from './Lines.js';
import type { PanelProps } from './SummaryPanel.js';

/**
 * The tools the tree calls, one line each: executions of the effect, duplicates (red when a
 * side effect was done twice), idempotency conflicts, the degraded share and the breaker.
 * Nothing when the scenario has no tools.
 *
 *   tools
 *   gmail.send  exec 1,050  dup 477  conflicts 0  degraded 0.0 %  closed
 */
export function toolsLines(view: RunView, _width: number): Line[] {
  const s = view.snapshot;
  const tools = s.tools ?? [];
  if (tools.length === 0) return [];
  const lines: Line[] = [
    [seg('tools', 'bold'), seg(s.users ? ` · users ${formatCount(s.users.submissions)} submissions` : '', 'dim')],
  ];
  for (const t of tools) {
    const breaker = view.toolBreakers?.[t.name];
    lines.push([
      seg(`${t.name}  exec ${formatCount(t.executions)}  dup `),
      seg(formatCount(t.duplicates), t.sideEffect && t.duplicates > 0 ? 'bad' : 'good'),
      seg(`  conflicts ${formatCount(t.conflicts)}  degraded `),
      seg(formatPercent(t.degradedShare), t.degradedShare > 0 ? 'warn' : 'plain'),
      ...(breaker === undefined
        ? []
        : [seg('  '), seg(breaker, breaker === 'closed' ? 'good' : breaker === 'open' ? 'bad' : 'warn')]),
    ]);
  }
  return lines;
}

/** Tool executions, duplicates, conflicts, degraded share and breaker state for one variant. */
export function ToolsPanel({ view, width, color }: PanelProps) {
  const lines = toolsLines(view, width);
  return lines.length === 0 ? null : <Lines lines={lines} width={width} color={color} />;
}
