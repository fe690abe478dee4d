import type { RunResult } from '../../run/metrics/result.js';
import { formatCount, formatPercent } from '../format.js';
import { escapeHtml } from './html-escape.js';

const COLUMNS: Array<[string, (t: NonNullable<RunResult['tools']>[number]) => string]> = [
  ['logical calls', (t) => formatCount(t.logicalCalls)],
  ['attempts', (t) => formatCount(t.attempts)],
  ['executions', (t) => formatCount(t.executions)],
  ['duplicates', (t) => formatCount(t.duplicates)],
  ['idempotency conflicts', (t) => formatCount(t.conflicts)],
  ['replays', (t) => formatCount(t.replays)],
  ['degraded', (t) => formatPercent(t.degradedShare)],
  ['failed', (t) => formatPercent(t.failureRate)],
  ['429 share', (t) => formatPercent(t.share['429'])],
];

/**
 * One row per variant and tool: executions of its effect, duplicates (red when a side effect
 * was done twice, green at none), conflicts, degraded and failed shares. '' when no variant
 * calls tools, so the report of a scenario without them is what it was.
 */
export function toolsTable(variants: readonly RunResult[]): string {
  const rows = variants.flatMap((v) =>
    (v.tools ?? []).map((t) => {
      const cells = COLUMNS.map(([name, f]) => {
        const health = name === 'duplicates' && t.sideEffect ? (t.duplicates > 0 ? 'bad' : 'good') : '';
        return `<td${health ? ` class="${health}"` : ''}>${escapeHtml(f(t))}</td>`;
      });
      return `<tr><td>${escapeHtml(v.name)}</td><td>${escapeHtml(t.name)}${t.sideEffect ? ' (side effect)' : ''}</td>${cells.join('')}</tr>`;
    }),
  );
  if (rows.length === 0) return '';
  const head = `<tr><th>variant</th><th>tool</th>${COLUMNS.map(([name]) => `<th>${name}</th>`).join('')}</tr>`;
  return `<div class="scroll"><table class="headline">${head}${rows.join('')}</table></div>`;
}
