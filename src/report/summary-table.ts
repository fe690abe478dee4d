import { fleetLines } from './fleet-lines.js';
import { SHED_REASONS } from '../engine/errors.js';
import type { LayerResult, ResultFile, RunResult, ToolResult, UpstreamHop } from '../run/metrics/result.js';
import { formatCount, formatMs, formatPercent, formatRate, formatTimes } from './format.js';
import { hopOf, settleText } from './hop-notes.js';
import { overrideLines } from './override-lines.js';

export interface SummaryTableOptions {
  /** Add ANSI colours (green / yellow / red by health). @default false */
  color: boolean;
  /** Columns to fit; variants that do not fit side by side go into further blocks. @default 80 */
  width: number;
}

const DEFAULTS: SummaryTableOptions = { color: false, width: 80 };

type Health = 'good' | 'warn' | 'bad' | 'none';
interface Cell {
  text: string;
  health: Health;
}
type Row = { label: string; cells?: Cell[] };

const GAP = 2;
const ANSI: Record<Health | 'bold' | 'dim', string> = {
  good: '32',
  warn: '33',
  bad: '31',
  none: '',
  bold: '1',
  dim: '2',
};

/** Health of a value where lower is better: good up to `ok`, warning up to `warn`. */
function lower(x: number, ok: number, warn: number): Health {
  return x <= ok ? 'good' : x <= warn ? 'warn' : 'bad';
}

/** Health of a share where higher is better: good from 99 %, warning from 90 %. */
function higher(share: number): Health {
  return share >= 0.99 ? 'good' : share >= 0.9 ? 'warn' : 'bad';
}

const cell = (text: string, health: Health = 'none'): Cell => ({ text, health });
const amp = (x: number): Cell => cell(formatTimes(x), lower(x, 1.5, 3));
/** A run's amplification, `—` when it made no logical leaf call (0 ÷ 0 is no figure, whatever the JSON's 0 says). */
const runAmp = (v: RunResult): Cell => (leafCalls(v) === 0 ? cell('—') : amp(v.amplification));
const layerAmp = (l: LayerResult): Cell => (l.logicalCalls === 0 ? cell('—') : amp(l.amplification));

function leafCalls(v: RunResult): number {
  return v.layers.length === 0 ? 0 : v.layers[v.layers.length - 1].logicalCalls;
}

/** `27.0×`, or `—` for a run with no logical leaf call. */
function ampText(v: RunResult): string {
  return leafCalls(v) === 0 ? '—' : formatTimes(v.amplification);
}
const share = (x: number): Cell => cell(formatPercent(x), lower(x, 0.01, 0.1));

function recovery(v: RunResult): Cell {
  if (!v.series.faultActive.some((f) => f > 0)) return cell('—');
  return v.recoveryMs === null
    ? cell('never', 'bad')
    : cell(formatMs(v.recoveryMs), v.recoveryMs === 0 ? 'good' : 'warn');
}

function wasted(v: RunResult): Cell {
  const { wastedTokens, tokensServed } = v.upstream;
  return cell(
    formatCount(wastedTokens),
    lower(tokensServed > 0 ? wastedTokens / tokensServed : wastedTokens, 0.01, 0.1),
  );
}

/** A status count per row, for each status any variant has: `  status 503`. */
function statusRows(vs: RunResult[], statuses: (v: RunResult) => Record<string, number> | undefined): Row[] {
  const keys = [...new Set(vs.flatMap((v) => Object.keys(statuses(v) ?? {})))].sort(byStatus);
  return keys.map((k) => ({
    label: `  status ${k}`,
    cells: vs.map((v) => {
      const all = statuses(v);
      return all === undefined ? cell('—') : cell(formatCount(all[k] ?? 0));
    }),
  }));
}

/** HTTP statuses first, in order, then words (`cancelled`, `reset`, `timeout`, …). */
function byStatus(a: string, b: string): number {
  const rank = (k: string): number => (/^\d+$/.test(k) ? Number(k) : 1000);
  return rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0);
}

/**
 * With a gateway under test: hop 1 (driver → gateway, what the driver sent and the gateway
 * answered) and hop 2 (gateway → upstream, as the upstream counted it once it settled), each
 * under its own heading; the total amplification heads the table instead of hop 1's.
 */
function hopRows(vs: RunResult[]): { top: Row[]; hops: Row[] } {
  const hop = (f: (h: UpstreamHop) => Cell) => (v: RunResult) => {
    const h = hopOf(v);
    return h === undefined ? cell('—') : f(h);
  };
  const row = (label: string, f: (v: RunResult) => Cell): Row => ({ label, cells: vs.map(f) });
  return {
    top: [
      row(
        'total amplification',
        hop((h) => amp(h.totalAmplification)),
      ),
    ],
    hops: [
      { label: 'hop 1 · driver → gateway' },
      row('  attempts', (v) => cell(formatCount(v.upstream.attempts))),
      row('  amplification', (v) => amp(v.amplification)),
      row('  429 share', (v) => share(v.upstream.share['429'])),
      row('  5xx share', (v) => share(v.upstream.share['5xx'])),
      row('  timeout share', (v) => share(v.upstream.share.timeout)),
      ...statusRows(vs, (v) => v.upstream.status),
      { label: 'hop 2 · gateway → upstream' },
      row(
        '  requests',
        hop((h) => cell(formatCount(h.reached))),
      ),
      row(
        '  amplification',
        hop((h) => amp(h.amplification)),
      ),
      ...statusRows(vs, (v) => hopOf(v)?.status),
      row(
        '  wasted tokens',
        hop((h) => cell(formatCount(h.wastedTokens))),
      ),
      row(
        '  settled',
        hop((h) => cell(settleText(h), h.settle.settled ? 'none' : 'warn')),
      ),
      row(
        '  requests after stop',
        hop((h) => cell(formatCount(h.settle.afterEnd))),
      ),
    ],
  };
}

function runRows(vs: RunResult[]): Row[] {
  const row = (label: string, f: (v: RunResult) => Cell): Row => ({ label, cells: vs.map(f) });
  const gateway = vs.some((v) => hopOf(v) !== undefined) ? hopRows(vs) : undefined;
  return [
    ...(gateway?.top ?? [row('amplification', runAmp)]),
    row('goodput', (v) => cell(formatRate(v.goodput), higher(v.successRate))),
    row('success rate', (v) => cell(formatPercent(v.successRate), higher(v.successRate))),
    row('recovery', recovery),
    row('root p50', (v) => cell(formatMs(v.roots.latencyMs.p50))),
    row('root p95', (v) => cell(formatMs(v.roots.latencyMs.p95))),
    row('root p99', (v) => cell(formatMs(v.roots.latencyMs.p99))),
    ...(gateway?.hops ?? [
      row('upstream attempts', (v) => cell(formatCount(v.upstream.attempts))),
      row('429 share', (v) => share(v.upstream.share['429'])),
      row('5xx share', (v) => share(v.upstream.share['5xx'])),
      row('timeout share', (v) => share(v.upstream.share.timeout)),
      row('wasted tokens', wasted),
    ]),
    // Runs with a streamed layer only.
    ...(vs.some((v) => v.truncatedSuccesses !== undefined)
      ? [row('truncated successes', (v) => truncated(v.truncatedSuccesses))]
      : []),
    // Runs that can resume streams only: broken streams continued into whole answers.
    ...(vs.some((v) => v.resumedStreams !== undefined)
      ? [row('resumed streams', (v) => cell(v.resumedStreams === undefined ? '—' : formatCount(v.resumedStreams)))]
      : []),
    // Runs with stage budgets only: root tasks that ended with what a stage out of budget had.
    ...(vs.some((v) => v.roots.partial !== undefined)
      ? [
          row('partial results', (v) =>
            v.roots.partial === undefined ? cell('—') : cell(formatCount(v.roots.partial)),
          ),
        ]
      : []),
  ];
}

/** A count of cut streams taken as answers: any is bad (a wrong answer that reads as a right one). */
function truncated(n: number | undefined): Cell {
  return n === undefined ? cell('—') : cell(formatCount(n), n === 0 ? 'good' : 'bad');
}

/** Rows for one layer, matched by name across variants ('—' where a variant lacks it). */
function layerRows(name: string, vs: RunResult[]): Row[] {
  const layers = vs.map((v) => v.layers.find((l) => l.name === name));
  const row = (label: string, f: (l: LayerResult) => Cell): Row => ({
    label: `  ${label}`,
    cells: layers.map((l) => (l ? f(l) : cell('—'))),
  });
  const reasons = SHED_REASONS.filter((r) => layers.some((l) => (l?.shed[r] ?? 0) > 0));
  const shedRows = reasons.length
    ? reasons.map((r) => row(`shed: ${r}`, (l) => cell(formatCount(l.shed[r] ?? 0))))
    : [row('shed', () => cell('0'))];
  return [
    { label: `layer ${name}` },
    row('logical calls', (l) => cell(formatCount(l.logicalCalls))),
    row('attempts', (l) => cell(formatCount(l.attempts))),
    row('amplification', layerAmp),
    row('success', (l) => cell(formatPercent(l.successRate), l.ok + l.failed > 0 ? higher(l.successRate) : 'none')),
    row('p50', (l) => cell(formatMs(l.latencyMs.p50))),
    row('p95', (l) => cell(formatMs(l.latencyMs.p95))),
    row('p99', (l) => cell(formatMs(l.latencyMs.p99))),
    row('wasted tokens', (l) => cell(formatCount(l.wastedTokens))),
    ...shedRows,
    ...(layers.some((l) => l?.truncatedSuccesses !== undefined)
      ? [row('truncated successes', (l) => truncated(l.truncatedSuccesses))]
      : []),
    ...(layers.some((l) => l?.resumedStreams !== undefined)
      ? [row('resumed streams', (l) => cell(l.resumedStreams === undefined ? '—' : formatCount(l.resumedStreams)))]
      : []),
    ...(layers.some((l) => l?.ttftMs !== undefined)
      ? (['p50', 'p95', 'p99'] as const).map((p) =>
          row(`ttft ${p}`, (l) => cell(l.ttftMs === undefined ? '—' : formatMs(l.ttftMs[p]))),
        )
      : []),
  ];
}

/** The users' resubmissions, when a variant has users; then rows per tool, matched by name across variants. */
function toolRows(vs: RunResult[]): Row[] {
  const out: Row[] = [];
  if (vs.some((v) => v.users !== undefined)) {
    out.push({ label: 'users' });
    out.push({ label: '  submissions', cells: vs.map((v) => cell(v.users ? formatCount(v.users.submissions) : '—')) });
    out.push({ label: '  amplification', cells: vs.map((v) => (v.users ? amp(v.users.amplification) : cell('—'))) });
  }
  const names: string[] = [];
  for (const v of vs) for (const t of v.tools ?? []) if (!names.includes(t.name)) names.push(t.name);
  for (const name of names) {
    const tools = vs.map((v) => v.tools?.find((t) => t.name === name));
    const row = (label: string, f: (t: ToolResult) => Cell): Row => ({
      label: `  ${label}`,
      cells: tools.map((t) => (t ? f(t) : cell('—'))),
    });
    out.push(
      { label: `tool ${name}` },
      row('logical calls', (t) => cell(formatCount(t.logicalCalls))),
      row('attempts', (t) => cell(formatCount(t.attempts))),
      row('executions', (t) => cell(formatCount(t.executions))),
      row('duplicates', (t) => cell(formatCount(t.duplicates), t.sideEffect ? lower(t.duplicates, 0, 0) : 'none')),
      row('idempotency conflicts', (t) => cell(formatCount(t.conflicts))),
      row('degraded', (t) => share(t.degradedShare)),
      row('failed', (t) => share(t.failureRate)),
      row('429 share', (t) => share(t.share['429'])),
    );
  }
  return out;
}

function allRows(vs: RunResult[]): Row[] {
  const names: string[] = [];
  for (const v of vs) for (const l of v.layers) if (!names.includes(l.name)) names.push(l.name);
  return [...runRows(vs), ...names.flatMap((n) => layerRows(n, vs)), ...toolRows(vs)];
}

function paint(text: string, style: Health | 'bold' | 'dim', color: boolean): string {
  return color && ANSI[style] ? `\x1b[${ANSI[style]}m${text}\x1b[0m` : text;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

/** Breaks ` · `-separated parts into lines of at most `width` columns. */
function wrap(parts: string[], width: number): string[] {
  const lines: string[] = [];
  for (const part of parts) {
    const last = lines.length - 1;
    if (last >= 0 && lines[last].length + 3 + part.length <= width) lines[last] += ` · ${part}`;
    else lines.push(last >= 0 ? `  ${part}` : part);
  }
  return lines;
}

function headline(vs: RunResult[], width: number): string[] {
  // Where tools have side effects, their repeats are the story as much as the load: the headline says both.
  const dups = vs.map(duplicatesOf);
  const counted = dups.some((d) => d !== undefined);
  if (vs.length === 1) {
    const v = vs[0];
    const h = hopOf(v);
    return wrap(
      [
        ...(h === undefined
          ? [`amplification ${ampText(v)}`]
          : [
              `amplification hop 1 ${formatTimes(v.amplification)}`,
              `hop 2 ${formatTimes(h.amplification)}`,
              `total ${formatTimes(h.totalAmplification)}`,
            ]),
        `goodput ${formatRate(v.goodput)}`,
        `success ${formatPercent(v.successRate)}`,
        ...(counted ? [`duplicates ${formatCount(dups[0] ?? 0)}`] : []),
      ],
      width,
    );
  }
  // With a gateway under test the headline is the total: what reached the upstream per call the tree meant.
  const gateway = vs.some((v) => hopOf(v) !== undefined);
  const parts = vs.map((v) => `${v.name} ${gateway ? formatTimes(hopOf(v)?.totalAmplification ?? 0) : ampText(v)}`);
  const dupParts = counted ? vs.map((v, i) => `${v.name} ${formatCount(dups[i] ?? 0)}`) : [];
  return wrap(
    [
      `${gateway ? 'total amplification' : 'amplification'} ${parts[0]}`,
      ...parts.slice(1),
      ...(counted ? [`duplicates ${dupParts[0]}`, ...dupParts.slice(1)] : []),
    ],
    width,
  );
}

/** Executions of side effects beyond the first per intent, over every side-effect tool; undefined without one. */
function duplicatesOf(v: RunResult): number | undefined {
  const tools = v.tools?.filter((t) => t.sideEffect);
  return tools === undefined || tools.length === 0 ? undefined : tools.reduce((n, t) => n + t.duplicates, 0);
}

/** One block of the table: the label column and the variant columns `from .. to`. */
function block(rows: Row[], vs: RunResult[], from: number, to: number, o: SummaryTableOptions): string[] {
  const labelW = Math.max(...rows.map((r) => r.label.length));
  const room = Math.max(4, o.width - labelW - GAP);
  const cols = vs.slice(from, to).map((v, j) => {
    const w = Math.min(room, Math.max(v.name.length, ...rows.map((r) => r.cells?.[from + j].text.length ?? 0)));
    return { name: truncate(v.name, w), w };
  });
  const head =
    ' '.repeat(labelW) + cols.map((c) => ' '.repeat(GAP) + paint(c.name.padStart(c.w), 'bold', o.color)).join('');
  const body = rows.map((r) => {
    if (!r.cells) return paint(truncate(r.label, o.width), 'bold', o.color);
    const cells = cols.map((c, j) => {
      const x = r.cells![from + j];
      return ' '.repeat(GAP) + paint(truncate(x.text, c.w).padStart(c.w), x.health, o.color);
    });
    return r.label.padEnd(labelW) + cells.join('');
  });
  return [head.trimEnd(), ...body];
}

/** Splits the variants into blocks that each fit the width side by side. */
function blocks(rows: Row[], vs: RunResult[], o: SummaryTableOptions): string[][] {
  const labelW = Math.max(...rows.map((r) => r.label.length));
  const widthOf = (i: number): number =>
    GAP + Math.max(vs[i].name.length, ...rows.map((r) => r.cells?.[i].text.length ?? 0));
  const out: string[][] = [];
  let from = 0;
  while (from < vs.length) {
    let to = from + 1;
    let used = labelW + widthOf(from);
    while (to < vs.length && used + widthOf(to) <= o.width) used += widthOf(to++);
    out.push(block(rows, vs, from, to, o));
    from = to;
  }
  return out;
}

function footer(file: ResultFile): string {
  const parts = [file.scenario, `seed ${file.seed}`, file.mode];
  if (file.timing.attemptsPerSec > 0) parts.push(`${formatCount(file.timing.attemptsPerSec)} upstream attempts/s`);
  if (file.timing.wallMs > 0) parts.push(`${formatMs(file.timing.wallMs)} wall`);
  return parts.join(' · ');
}

/** What ran, when a variant or the command line changed the file: each field once, with its value and where it came from. */
function fleetBlock(vs: RunResult[], o: SummaryTableOptions): string[] {
  const lines = fleetLines(vs);
  if (lines.length === 0) return [];
  return [[paint('fleet (who drove what; what the engines shared)', 'bold', o.color), ...lines].join('\n')];
}

function overridesBlock(vs: RunResult[], o: SummaryTableOptions): string[] {
  const lines = overrideLines(vs);
  if (lines.length === 0) return [];
  const title = 'overrides (the command line wins over a variant, a variant over the scenario)';
  return [[paint(title, 'bold', o.color), ...lines.map((l) => truncate(l, Math.max(o.width, 100)))].join('\n')];
}

/**
 * The terminal summary of a result file: a headline (amplification, goodput, success for one
 * variant; each variant's amplification for several) and the notes on how its figures read,
 * one line each (a stopped run, roots the drain cut off, no roots), then a table with one
 * column per variant, the notes on expectations not judged, then the fields the variants and
 * the command line overrode. Plain text
 * unless `color` is asked for; fits `width` columns (80 by default) for two variants, and
 * splits more variants into blocks that fit.
 */
export function summaryTable(file: ResultFile, opts?: Partial<SummaryTableOptions>): string {
  const o: SummaryTableOptions = { ...DEFAULTS, ...opts };
  const vs = file.variants;
  if (vs.length === 0) return `${paint('no variants in this result', 'warn', o.color)}\n`;
  const rows = allRows(vs);
  const tables = blocks(rows, vs, o).map((lines) => lines.join('\n'));
  const foot = wrap(footer(file).split(' · '), o.width).map((l) => paint(l, 'dim', o.color));
  const head = headline(vs, o.width).map((l) => paint(l, 'bold', o.color));
  // Notes on how the figures read go under the headline; those on the gate after the table, before its checks.
  const note = (kind: 'figures' | 'gate') =>
    (file.notes ?? [])
      .filter((n) => (n.kind === 'skipped-expectations') === (kind === 'gate'))
      .map((n) => paint(`note: ${n.message}`, 'warn', o.color));
  const gate = note('gate');
  return `${[
    [...head, ...note('figures')].join('\n'),
    ...tables,
    ...(gate.length > 0 ? [gate.join('\n')] : []),
    ...fleetBlock(vs, o),
    ...overridesBlock(vs, o),
    foot.join('\n'),
  ].join('\n\n')}\n`;
}
