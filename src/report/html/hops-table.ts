import type { RunResult, UpstreamHop } from '../../run/metrics/result.js';
import { formatCount, formatPercent, formatTimes } from '../format.js';
import { hopOf, settleText } from '../hop-notes.js';
import { escapeHtml } from './html-escape.js';

type Column = [string, (v: RunResult, h: UpstreamHop) => string];

const statusText = (status: Record<string, number>): string =>
  Object.entries(status)
    .map(([k, n]) => `${k} ${formatCount(n)}`)
    .join(' · ') || '—';

// The amplifications first, where a page that scrolls sideways still shows them.
const COLUMNS: Column[] = [
  ['total amplification', (_v, h) => formatTimes(h.totalAmplification)],
  ['hop 1 amplification', (v) => formatTimes(v.amplification)],
  ['hop 2 amplification', (_v, h) => formatTimes(h.amplification)],
  ['hop 1 attempts', (v) => formatCount(v.upstream.attempts)],
  ['hop 2 requests', (_v, h) => formatCount(h.reached)],
  ['hop 1 statuses', (v) => statusText(v.upstream.status)],
  ['hop 2 statuses', (_v, h) => statusText(h.status)],
  ['hop 1 5xx share', (v) => formatPercent(v.upstream.share['5xx'])],
  ['hop 2 settled', (_v, h) => settleText(h)],
  ['hop 2 requests after the driver stopped', (_v, h) => formatCount(h.settle.afterEnd)],
];

/**
 * One row per variant run with a gateway under test: hop 1 (driver → gateway) as the driver
 * saw it, hop 2 (gateway → upstream) as the upstream counted it, the total, and how hop 2
 * settled (what it hides is in the file's notes, at the top of the page). '' without a gateway
 * under test.
 */
export function hopsTable(variants: readonly RunResult[]): string {
  const rows = variants.flatMap((v) => {
    const h = hopOf(v);
    if (h === undefined) return [];
    const cells = COLUMNS.map(([, f]) => `<td>${escapeHtml(f(v, h))}</td>`);
    return [`<tr><td>${escapeHtml(v.name)}</td>${cells.join('')}</tr>`];
  });
  if (rows.length === 0) return '';
  const head = `<tr><th>variant</th>${COLUMNS.map(([name]) => `<th>${escapeHtml(name)}</th>`).join('')}</tr>`;
  return `<div class="scroll"><table class="headline">${head}${rows.join('')}</table></div>`;
}
