import { formatCount, formatMs, formatPercent, formatRate, formatTimes } from './format.js';
import { formatSweepMetric, sweepHeatmap } from './heatmap.js';
import { refusedLine } from './refused-line.js';
import {
  isRefusedCell,
  sweepCells,
  type PointFigures,
  type Spread,
  type SweepFile,
  type SweepParam,
  type SweepPoint,
} from './sweep-file.js';
import { bestPoint } from './html/sweep-rows.js';

export interface SweepTextOptions {
  /** ANSI colour (heatmap backgrounds, the best metric in bold). */
  color: boolean;
}

const GAP = '  ';
const BOLD = '\x1b[1m';
const RESET = '\x1b[0m';

/** The figures of the table: head, the metric names that mean it (then it needs no column of its own), format. */
const FIGURES: Array<[string, string[], (f: PointFigures) => string]> = [
  ['goodput', ['goodput'], (f) => formatRate(f.goodput)],
  ['amplif.', ['amplification'], (f) => formatTimes(f.amplification)],
  ['success', ['successRate'], (f) => formatPercent(f.successRate)],
  [
    'root p99',
    ['p99', 'p99Ms', 'latency.p99', 'latencyMs.p99', 'roots.p99', 'roots.latency.p99', 'roots.latencyMs.p99'],
    (f) => formatMs(f.p99Ms),
  ],
  ['wasted', ['wastedTokens', 'upstream.wastedTokens'], (f) => formatCount(f.wastedTokens)],
];

/** Column of the figure the metric is, or -1 when it needs a column of its own. */
function figureOf(metric: string): number {
  return FIGURES.findIndex(([, names]) => names.includes(metric.trim()));
}

/**
 * Short names for the parameters: their paths less the leading keys they all share
 * (`engine.throttle.k`, `engine.retryBudget.ratio` → `throttle.k`, `retryBudget.ratio`), so
 * a two-parameter table fits 80 columns. A single parameter keeps its whole path.
 */
export function paramLabels(params: readonly SweepParam[]): string[] {
  const split = params.map((p) => p.path.split('.'));
  if (split.length < 2) return params.map((p) => p.path);
  let shared = 0;
  while (split.every((s) => shared < s.length - 1 && s[shared] === split[0][shared])) shared++;
  return split.map((s) => s.slice(shared).join('.'));
}

/** A cell's text once padded, restyled (the best metric in bold); row -1 is the header. */
type Style = (row: number, col: number, padded: string) => string;

/** Text cells laid out: right-aligned columns two spaces apart, after a one-character marker column. */
function layout(head: string[], rows: string[][], marks: string[], style: Style = (_r, _c, t) => t): string[] {
  const widths = head.map((h, j) => Math.max(h.length, ...rows.map((r) => r[j].length)));
  const line = (cells: string[], mark: string, i: number): string =>
    `${mark} ${cells.map((c, j) => style(i, j, c.padStart(widths[j]))).join(GAP)}`.trimEnd();
  return [line(head, ' ', -1), ...rows.map((r, i) => line(r, marks[i], i))];
}

/**
 * Every cell of the grid: its parameters, goodput, amplification, success, root p99, wasted
 * tokens, and the metric when it is none of these; `*` marks the Pareto front. A refused cell
 * says `refused` where its figures would be. In colour the best value of the metric is bold.
 */
export function sweepTable(file: SweepFile, opts: SweepTextOptions): string {
  const own = figureOf(file.metric) < 0;
  const head = [...paramLabels(file.params), ...FIGURES.map(([h]) => h), ...(own ? [file.metric] : [])];
  const cells = sweepCells(file);
  const rows = cells.map((p) =>
    isRefusedCell(p)
      ? [...p.values.map(String), 'refused', ...head.slice(file.params.length + 1).map(() => '')]
      : [
          ...p.values.map(String),
          ...FIGURES.map(([, , f]) => f(p.figures)),
          ...(own ? [formatSweepMetric(file, p.metric)] : []),
        ],
  );
  const bestAt = opts.color ? bestPoint(file) : -1;
  const best = bestAt < 0 ? -1 : cells.indexOf(file.points[bestAt]);
  const column = own ? head.length - 1 : file.params.length + figureOf(file.metric);
  const bold: Style = (r, c, t) => (r >= 0 && r === best && c === column ? `${BOLD}${t}${RESET}` : t);
  const lines = layout(
    head,
    rows,
    cells.map((p) => (!isRefusedCell(p) && p.pareto ? '*' : ' ')),
    bold,
  );
  const refused = refusedSummary(file);
  return `${lines.join('\n')}\n* on the Pareto front (below)\n${refused === undefined ? '' : `${refused}\n`}`;
}

/** The line about the refused cells (how many, one of them and why), or undefined when none was. */
export function refusedSummary(file: SweepFile): string | undefined {
  const refused = file.refused ?? [];
  if (refused.length === 0) return undefined;
  return refusedLine(refused.length, file.points.length + refused.length, {
    point: setTexts(file, refused[0].values),
    reason: refused[0].reason,
  });
}

/** `engine.throttle.k=1.5 engine.retryBudget.ratio=0.2` as `--set` flags to paste. */
function setFlags(file: SweepFile, p: SweepPoint): string {
  return file.params.map((q, i) => `--set ${q.path}=${String(p.values[i])}`).join(' ');
}

/** `engine.throttle.k=1.5 engine.retryBudget.ratio=0.2`: a cell's values as `--set` texts. */
function setTexts(file: SweepFile, values: SweepPoint['values']): string {
  return file.params.map((q, i) => `${q.path}=${String(values[i])}`).join(' ');
}

/**
 * The Pareto front, best goodput first: the points no other point beats on goodput,
 * amplification and root p99 at once (higher goodput, lower amplification and lower p99).
 */
export function paretoList(file: SweepFile): string {
  const front = file.points.filter((p) => p.pareto).sort((a, b) => b.figures.goodput - a.figures.goodput);
  const title = `Pareto front (goodput ↑, amplification ↓, root p99 ↓): ${front.length} of ${file.points.length} points`;
  const head = [...paramLabels(file.params), 'goodput', 'amplification', 'root p99'];
  // With seeds, each figure is a mean, ± half its 95 % interval: points within each other's spread are not told apart.
  const pm = (v: number, s: Spread | undefined, f: (x: number) => string): string =>
    s === undefined ? f(v) : `${f(v)} ±${f((s.high - s.low) / 2)}`;
  const rows = front.map((p) => [
    ...p.values.map(String),
    pm(p.figures.goodput, p.spread?.goodput, formatRate),
    pm(p.figures.amplification, p.spread?.amplification, formatTimes),
    pm(p.figures.p99Ms, p.spread?.p99Ms, formatMs),
  ]);
  return `${title}\n${layout(
    head,
    rows,
    rows.map(() => ' '),
  ).join('\n')}\n`;
}

/** `brownout · variant engine · seed 1 · 12 points`, then `sweep of engine.throttle.k (4) × engine.retryBudget.ratio (3)`. */
export function sweepTitle(file: SweepFile): string {
  const grid = file.params.map((p) => `${p.path} (${p.values.length})`).join(' × ');
  const seeds =
    file.seeds === undefined ? `seed ${file.seed}` : `seeds ${seedRange(file.seeds)} (means ± 95 % intervals)`;
  return `${file.scenario} · variant ${file.variant} · ${seeds} · ${countText(file)}\nsweep of ${grid}`;
}

/** `1–5`, or the list when the seeds do not follow each other. */
export function seedRange(seeds: readonly number[]): string {
  const run = seeds.every((s, i) => i === 0 || s === seeds[i - 1] + 1);
  return run && seeds.length > 2 ? `${seeds[0]}–${seeds.at(-1)}` : seeds.join(', ');
}

/** `12 points`, or `12 points (3 refused)`: the whole grid. */
export function countText(file: SweepFile): string {
  const refused = file.refused?.length ?? 0;
  return `${file.points.length + refused} points${refused > 0 ? ` (${refused} refused)` : ''}`;
}

/** One line: the best value of the metric and where (`-q` prints only this). */
export function sweepHeadline(file: SweepFile): string {
  const best = bestPoint(file);
  const front = file.points.filter((p) => p.pareto).length;
  const tail = `${countText(file)}, ${front} on the Pareto front`;
  if (best < 0) return `no point has a value for ${file.metric} · ${tail}`;
  const p = file.points[best];
  return `best ${file.metric} ${formatSweepMetric(file, p.metric)}: ${setFlags(file, p)} · ${tail}`;
}

/** `best goodput 15.3/s at` and the point's `--set` flags on the next line (to paste into `run`). */
function bestLines(file: SweepFile): string {
  const best = bestPoint(file);
  if (best < 0) return `no point has a value for ${file.metric}\n`;
  const p = file.points[best];
  return `best ${file.metric} ${formatSweepMetric(file, p.metric)} at\n  ${setFlags(file, p)}\n`;
}

/** What `stormlab sweep` prints: what was swept, every point, the heatmap, the best point, the front. */
export function sweepText(file: SweepFile, opts: SweepTextOptions): string {
  return [
    sweepTitle(file),
    '',
    sweepTable(file, opts),
    sweepHeatmap(file, opts),
    bestLines(file),
    paretoList(file),
  ].join('\n');
}
