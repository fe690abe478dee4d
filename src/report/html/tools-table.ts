import type { RunResult } from '../../run/metrics/result.js';
import { formatCount, formatMs, formatPercent, formatRate, formatTimes } from '../format.js';
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

type LimitColumn = [string, (v: RunResult) => string];

/** The columns of {@link limitsTable} these variants have figures for. */
function limitColumns(variants: readonly RunResult[]): LimitColumn[] {
  const cols: LimitColumn[] = [];
  if (variants.some((v) => v.users !== undefined)) {
    const u = (f: (x: NonNullable<RunResult['users']>) => string) => (v: RunResult) =>
      v.users === undefined ? '—' : f(v.users);
    cols.push(
      ['submissions', u((x) => formatCount(x.submissions))],
      [
        'resubmits (impatient / after error)',
        u((x) => `${formatCount(x.resubmits)} (${formatCount(x.impatient)} / ${formatCount(x.afterError)})`),
      ],
      ['users amplification', u((x) => formatTimes(x.amplification))],
    );
  }
  const tenants = [...new Set(variants.flatMap((v) => (v.tenants ?? []).map((t) => t.name)))];
  if (tenants.length > 0) {
    cols.push(['refused at entry', (v) => formatCount((v.tenants ?? []).reduce((n, t) => n + t.refused, 0))]);
    for (const name of tenants) {
      cols.push([
        `goodput ${name}`,
        (v) => {
          const t = v.tenants?.find((x) => x.name === name);
          return t === undefined
            ? '—'
            : `${formatRate(t.goodput)}${t.refused > 0 ? ` (${formatCount(t.refused)} refused)` : ''}`;
        },
      ]);
    }
  }
  if (variants.some((v) => v.inference !== undefined)) {
    const q = (f: (x: NonNullable<RunResult['inference']>) => string) => (v: RunResult) =>
      v.inference === undefined ? '—' : f(v.inference);
    cols.push(
      ['inference queued', q((x) => formatCount(x.queued))],
      [
        'estimated wait (mean / max)',
        q((x) => `${formatMs(x.estimatedWaitMs.mean)} / ${formatMs(x.estimatedWaitMs.max)}`),
      ],
      ['gave up', q((x) => formatCount(x.gaveUp))],
      ['fell back', q((x) => formatCount(x.fallbacks))],
    );
  }
  return cols;
}

/**
 * One row per variant: the users' submissions (the outermost amplifier), the entry limit's
 * refusals and each tenant's goodput, the inference queue's estimated waits, give-ups and
 * fallbacks — the columns the variants have figures for. '' when they have none of them.
 */
export function limitsTable(variants: readonly RunResult[]): string {
  const cols = limitColumns(variants);
  if (cols.length === 0) return '';
  const head = `<tr><th>variant</th>${cols.map(([name]) => `<th>${escapeHtml(name)}</th>`).join('')}</tr>`;
  const rows = variants.map(
    (v) => `<tr><td>${escapeHtml(v.name)}</td>${cols.map(([, f]) => `<td>${escapeHtml(f(v))}</td>`).join('')}</tr>`,
  );
  return `<div class="scroll"><table class="headline">${head}${rows.join('')}</table></div>`;
}
