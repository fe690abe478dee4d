import type { RunResult } from '../../run/metrics/result.js';
import { formatCount, formatMs, formatPercent, formatRate, formatTimes } from '../format.js';
import { hopOf } from '../hop-notes.js';
import { escapeHtml } from './html-escape.js';

type Health = 'good' | 'warn' | 'bad' | '';
interface Cell {
  text: string;
  health: Health;
}

// The thresholds of the terminal summary (summary-table.ts), so both colour a figure alike.
const amp = (x: number): Cell => ({ text: formatTimes(x), health: x <= 1.5 ? 'good' : x <= 3 ? 'warn' : 'bad' });
const success = (x: number): Health => (x >= 0.99 ? 'good' : x >= 0.9 ? 'warn' : 'bad');

function recovery(v: RunResult): Cell {
  if (!v.series.faultActive.some((f) => f > 0)) return { text: '—', health: '' };
  if (v.recoveryMs === null) return { text: 'never', health: 'bad' };
  return { text: formatMs(v.recoveryMs), health: v.recoveryMs === 0 ? 'good' : 'warn' };
}

/**
 * Two verdicts, said apart: the engine at a full outage protects its upstream while its
 * tasks fail, and a storm fails both.
 */
const upstream = (v: RunResult): Cell => {
  const h = amp(totalAmp(v)).health;
  return { text: h === 'good' ? 'protected' : h === 'warn' ? 'strained' : 'stormed', health: h };
};
const tasks = (v: RunResult): Cell => {
  const h = success(v.successRate);
  return { text: h === 'good' ? 'succeeding' : h === 'warn' ? 'degraded' : 'failing', health: h };
};

/** With a gateway under test the verdict and the headline figure are the total amplification, what reached the upstream. */
const totalAmp = (v: RunResult): number => hopOf(v)?.totalAmplification ?? v.amplification;

const COLUMNS: Array<[string, (v: RunResult) => Cell]> = [
  ['upstream', upstream],
  ['tasks', tasks],
  ['amplification', (v) => amp(v.amplification)],
  ['goodput', (v) => ({ text: formatRate(v.goodput), health: success(v.successRate) })],
  ['success rate', (v) => ({ text: formatPercent(v.successRate), health: success(v.successRate) })],
  ['root p99', (v) => ({ text: formatMs(v.roots.latencyMs.p99), health: '' })],
  ['recovery', recovery],
  ['upstream attempts', (v) => ({ text: formatCount(v.upstream.attempts), health: '' })],
  ['429 share', (v) => ({ text: formatPercent(v.upstream.share['429']), health: '' })],
  ['5xx share', (v) => ({ text: formatPercent(v.upstream.share['5xx']), health: '' })],
  ['wasted tokens', (v) => ({ text: formatCount(v.upstream.wastedTokens), health: '' })],
];

const finished = (v: RunResult): number => v.roots.ok + v.roots.late + v.roots.failed + (v.roots.partial ?? 0);
const rootShare = (n: number | undefined, v: RunResult): Cell =>
  n === undefined
    ? { text: '—', health: '' }
    : { text: formatPercent(finished(v) > 0 ? n / finished(v) : 0), health: n > 0 ? 'warn' : 'good' };
const sideEffects = (v: RunResult) => (v.tools ?? []).filter((t) => t.sideEffect);

/**
 * Columns only some results have, each shown when a variant has it: duplicate side effects
 * (red at any, green at none), root tasks that ended degraded (a draft instead of the send)
 * and partial (a stage out of budget).
 */
const OPTIONAL: Array<[string, (v: RunResult) => boolean, (v: RunResult) => Cell]> = [
  [
    'duplicates',
    (v) => sideEffects(v).length > 0,
    (v) => {
      if (sideEffects(v).length === 0) return { text: '—', health: '' };
      const n = sideEffects(v).reduce((sum, t) => sum + t.duplicates, 0);
      return { text: formatCount(n), health: n > 0 ? 'bad' : 'good' };
    },
  ],
  ['degraded', (v) => v.roots.degraded !== undefined, (v) => rootShare(v.roots.degraded, v)],
  ['partial', (v) => v.roots.partial !== undefined, (v) => rootShare(v.roots.partial, v)],
];

/**
 * The headline figures, one row per variant, coloured by health as in the terminal summary;
 * with tools and stage budgets also duplicates and the degraded and partial shares of root tasks.
 */
export function headlineTable(variants: readonly RunResult[]): string {
  // After the two verdicts, where a page that scrolls sideways still shows them.
  const columns = [
    ...COLUMNS.slice(0, 2),
    ...OPTIONAL.filter(([, has]) => variants.some(has)).map(([name, , f]): (typeof COLUMNS)[number] => [name, f]),
    ...(variants.some((v) => hopOf(v) !== undefined) ? gatewayColumns(COLUMNS.slice(2)) : COLUMNS.slice(2)),
  ];
  const head = `<tr><th>variant</th>${columns.map(([name]) => `<th>${name}</th>`).join('')}</tr>`;
  const rows = variants.map((v) => {
    const cells = columns
      .map(([, f]) => f(v))
      .map((c) => `<td${c.health ? ` class="${c.health}"` : ''}>${escapeHtml(c.text)}</td>`);
    return `<tr><td>${escapeHtml(v.name)}</td>${cells.join('')}</tr>`;
  });
  return `<div class="scroll"><table class="headline">${head}${rows.join('')}</table></div>`;
}

/**
 * The figures of a gateway under test, labelled by hop: the total amplification first, then
 * hop 1's (what the driver sent the gateway and it answered); hop 1 has no wasted tokens to
 * show (the upstream's are hop 2's, in the two hops' table).
 */
function gatewayColumns(columns: typeof COLUMNS): typeof COLUMNS {
  return columns.flatMap(([name, f]): typeof COLUMNS => {
    if (name === 'amplification')
      return [
        ['total amplification', (v) => amp(totalAmp(v))],
        ['hop 1 amplification', f],
      ];
    if (name === 'wasted tokens') return [];
    return [
      [name.startsWith('upstream ') || name.endsWith(' share') ? `hop 1 ${name.replace('upstream ', '')}` : name, f],
    ];
  });
}
