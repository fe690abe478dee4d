import type { EffectiveScenario } from '../run/metrics/result.js';
import YAML from 'yaml';
import { formatDuration } from '../scenario/duration.js';
import { formatFigure, formatMs, formatPercent, formatRate, formatTimes, type FigureUnit } from './format.js';
import { refusedLine } from './refused-line.js';
import type { PointFigures } from './sweep-file.js';

/**
 * The versioned result of `stormlab tune` (`stormlab.tune/v1`): the best point found, the
 * scenario's current values judged the same way, and every point the search simulated.
 */
export const TUNE_SCHEMA = 'stormlab.tune/v1';

export interface TuneParamInfo {
  /** The `--set` path: `engine.throttle.k`. */
  path: string;
  min: number;
  max: number;
  scale: 'linear' | 'log';
  integer: boolean;
  /** A duration in ms (written back like `2s`). */
  duration: boolean;
  /** The range is the built-in one for this engine knob. */
  builtIn: boolean;
  /** The value in the scenario as written (the engine's default when it gives none); null when off or unknown. */
  current: number | null;
}

export interface TuneConstraint {
  /** As written: `amplification <= 1.2`. */
  text: string;
  /** The canonical metric name. */
  metric: string;
  op: string;
  threshold: number;
  thresholdText: string;
  unit: FigureUnit;
}

export interface TuneConstraintFigure {
  /** The figure, rounded as the result JSON rounds it; null when the run has none (never recovered). */
  actual: number | null;
  holds: boolean;
}

export interface TunePoint {
  /** One value per parameter, in the order of `params` (null: the scenario leaves it off). */
  values: Array<number | null>;
  /** With several seeds, the mean over them (as are the constraints' figures and `figures`). */
  objective: number | null;
  /** With several seeds: the objective's 95 % interval (t distribution). */
  interval?: { low: number; high: number };
  constraints: TuneConstraintFigure[];
  /** Meets every constraint. */
  feasible: boolean;
  /** How far it misses the constraints (relative to their thresholds, summed); 0 when feasible. */
  violation: number;
  figures: PointFigures;
  /** The search round it was simulated in; 0 for the baseline. */
  round: number;
}

export interface TuneRound {
  round: number;
  /** `[low, high]` per parameter. */
  box: Array<[number, number]>;
  evaluated: number;
  reused: number;
  /** The best point so far after this round. */
  best: number[];
}

export interface TuneRefusedPoint {
  /** One value per parameter, in the order of `params`. */
  values: number[];
  /** Why, on one line: `engine: breaker.maxOpenMs must be a number >= 60000, got 30000`. */
  reason: string;
  /** The search round it came up in. */
  round: number;
}

export interface TuneFile {
  schema: typeof TUNE_SCHEMA;
  scenario: string;
  /** The variant every point ran (`engine` when the scenario has one), or the scenario's own name. */
  variant: string;
  seed: number;
  /** With `--seeds` above 1: the seeds every point and the baseline ran on. */
  seeds?: number[];
  durationMs: number;
  objective: { direction: 'maximize' | 'minimize'; text: string; metric: string; unit: FigureUnit };
  constraints: TuneConstraint[];
  params: TuneParamInfo[];
  /** The best point meets every constraint (exit 0); when not, it is the least-bad one (exit 1). */
  feasible: boolean;
  best: TunePoint;
  /** The scenario as written: none of the tuned parameters set. */
  baseline: TunePoint;
  /**
   * With several seeds: the answer's objective minus the current one's, paired seed by seed,
   * its 95 % interval, and whether that interval lies wholly on the better side of 0.
   */
  noise?: { difference: { mean: number; low: number; high: number }; beyondNoise: boolean };
  /** Every point the search simulated, best first. */
  points: TunePoint[];
  /**
   * Points of the search that were not simulated because the scenario or the engine refuses
   * their values together (breaker.openMs above maxOpenMs): infeasible, each spent a place in
   * the budget. In the order they came up; absent when there are none (and in older files).
   */
  refused?: TuneRefusedPoint[];
  search: { budget: number; evaluations: number; rounds: TuneRound[]; stopped: 'budget' | 'converged' };
  /**
   * What every point ran before its own values (as in a sweep file): the scenario document
   * after the variant's overrides and the command line's; a point sets each `params[i].path`
   * to its value on top, then its seed. Absent in files written before it was.
   */
  effective?: EffectiveScenario;
  timing: { wallMs: number; workers: number };
}

const RUNNERS_UP = 5;

/** A parameter's value as a scenario writes it: `1.75`, `2.5s`, `off`. */
export function paramValue(p: Pick<TuneParamInfo, 'duration'>, v: number | null): string {
  if (v === null) return 'off';
  return p.duration ? formatDuration(v) : String(v);
}

/**
 * The tuned engine knobs as a YAML `engine:` block to merge into a scenario (only the tuned
 * keys, nested, durations like `2s`); parameters outside `engine:` are left to `--set`.
 */
export function engineBlock(file: TuneFile, point: TunePoint): string {
  const root: Record<string, unknown> = {};
  file.params.forEach((p, i) => {
    const keys = p.path.split('.');
    if (keys[0] !== 'engine' || /[[\]]/.test(p.path)) return;
    let node = root;
    for (const k of keys.slice(0, -1)) node = (node[k] ??= {}) as Record<string, unknown>;
    const v = point.values[i];
    node[keys.at(-1)!] = v === null ? false : p.duration ? formatDuration(v) : v;
  });
  return Object.keys(root).length === 0 ? '' : YAML.stringify(root);
}

/** `--set engine.throttle.k=1.75 --set …`: the point on a command line. */
export function setFlags(file: TuneFile, point: TunePoint): string {
  return file.params.map((p, i) => `--set ${shellWord(`${p.path}=${paramValue(p, point.values[i])}`)}`).join(' ');
}

/** A word as a POSIX shell reads it back: bare when safe, else in single quotes. */
export function shellWord(s: string): string {
  return /^[\w.=:/@%+,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** One line: the answer and its headline figures (what `-q` prints). */
export function tuneHeadline(file: TuneFile): string {
  const b = file.best;
  const values = file.params.map((p, i) => `${p.path}=${paramValue(p, b.values[i])}`).join(' ');
  const obj = `${file.objective.text} ${objective(file, b)} (now ${objective(file, file.baseline)}${change(b.objective, file.baseline.objective)})`;
  const refused = file.refused?.length ?? 0;
  const skipped = refused > 0 ? [`${refused} skipped (refused)`] : [];
  if (!file.feasible)
    return [
      `no point met ${file.constraints.map((c) => c.text).join(' and ')} (${file.points.length} tried); least bad: ${values}`,
      constraintsText(file, b),
      ...skipped,
    ].join(' · ');
  return [
    `best: ${values}`,
    obj,
    ...noiseWord(file),
    ...(file.constraints.length > 0 ? [constraintsText(file, b)] : []),
    ...skipped,
  ].join(' · ');
}

/** Below this relative gain, the report suggests checking the answer with another seed. */
const SMALL_GAIN = 0.02;

function relativeChange(best: number | null, now: number | null): number | undefined {
  return best === null || now === null || now === 0 ? undefined : (best - now) / Math.abs(now);
}

/** `, +3.3 %`: the relative change from the current value, when there is one to compare with. */
function change(best: number | null, now: number | null): string {
  const rel = relativeChange(best, now);
  if (rel === undefined || rel === 0) return '';
  const pct = rel * 100;
  return `, ${pct > 0 ? '+' : '−'}${Math.abs(pct) < 10 ? Math.abs(pct).toFixed(1) : Math.abs(pct).toFixed(0)} %`;
}

/** The objective, and with several seeds `± half its 95 % interval`. */
function objective(file: TuneFile, p: TunePoint): string {
  const v = formatFigure(file.objective.unit, p.objective);
  if (p.interval === undefined) return v;
  return `${v} ±${formatFigure(file.objective.unit, (p.interval.high - p.interval.low) / 2)}`;
}

/** `beyond noise` / `within noise`: what the paired comparison over the seeds says, for the -q line. */
function noiseWord(file: TuneFile): string[] {
  if (file.noise === undefined) return [];
  const same = file.params.every((p, i) => file.best.values[i] === p.current);
  if (same) return [];
  return [file.noise.beyondNoise ? 'beyond noise' : `within noise over ${file.seeds?.length ?? 0} seeds`];
}

/** What the paired comparison says, in a sentence; undefined with one seed. */
function noiseLine(file: TuneFile): string | undefined {
  const n = file.noise;
  if (n === undefined) return undefined;
  const f = (v: number): string => `${v >= 0 ? '+' : '−'}${formatFigure(file.objective.unit, Math.abs(v))}`;
  const d = `${file.objective.text} ${f(n.difference.mean)} (95 % interval ${f(n.difference.low)} to ${f(n.difference.high)}), paired over ${file.seeds?.length ?? 0} seeds`;
  return n.beyondNoise
    ? `beyond noise: the answer beats the current values by ${d}`
    : `within noise: the answer against the current values is ${d}, an interval that holds 0; it may be no better — try more --seeds before adopting it`;
}

function constraintValue(c: TuneConstraint, f: TuneConstraintFigure): string {
  return f.actual === null ? (c.metric === 'recoveryMs' ? 'never' : '—') : formatFigure(c.unit, f.actual);
}

function constraintsText(file: TuneFile, p: TunePoint): string {
  return file.constraints
    .map((c, i) => `${c.text}: ${constraintValue(c, p.constraints[i])} ${p.constraints[i].holds ? 'held' : 'FAILED'}`)
    .join(' · ');
}

/**
 * The whole report: the answer, the figures behind it beside the current values, the search,
 * the runners-up, and a `stormlab run` line for the answer. `runArgs` are that line's scenario
 * and shared flags as the user gave them (`./my.yaml --variant engine --duration 30s`).
 */
export function tuneReport(file: TuneFile, opts: { runArgs?: string } = {}): string {
  const runArgs =
    opts.runArgs ?? `${file.scenario}${file.variant !== file.scenario ? ` --variant ${file.variant}` : ''}`;
  const parts = [
    heading(file),
    answer(file),
    figuresTable(file),
    searchLog(file),
    runnersUp(file),
    `reproduce: stormlab run ${runArgs} ${setFlags(file, file.best)}`,
  ];
  return `${parts.filter((p) => p !== '').join('\n\n')}\n`;
}

function heading(file: TuneFile): string {
  const goal = `${file.objective.direction} ${file.objective.text}${file.constraints.length > 0 ? ` subject to ${file.constraints.map((c) => c.text).join(', ')}` : ''}`;
  const seeds =
    file.seeds === undefined
      ? `seed ${file.seed}`
      : `seeds ${file.seeds[0]}–${file.seeds.at(-1)} (${file.seeds.length} per point: means ± 95 % intervals)`;
  return `tune ${file.scenario} · variant ${file.variant} · ${seeds} · ${formatDuration(file.durationMs)} per run\n${goal}\n${tuneHeadline(file)}`;
}

function answer(file: TuneFile): string {
  if (!file.feasible)
    return `no point satisfied the constraints; the least-bad one is below (not a recommendation: loosen a constraint or widen a range)`;
  const same = file.params.every((p, i) => file.best.values[i] === p.current);
  const block = engineBlock(file, file.best);
  const others = file.params.filter((p) => !p.path.startsWith('engine.') || /[[\]]/.test(p.path));
  const lines = [
    same
      ? 'the current values are the best found: keep them'
      : `best of ${file.points.length} points${block ? " — merge into the scenario's engine: block" : ''}`,
  ];
  if (block) lines.push(indent(block.trimEnd()));
  if (others.length > 0)
    lines.push(
      `  and ${others.map((p) => `${p.path}: ${paramValue(p, file.best.values[file.params.indexOf(p)])}`).join(', ')}`,
    );
  const gain = relativeChange(file.best.objective, file.baseline.objective);
  const noise = noiseLine(file);
  if (!same && noise !== undefined) lines.push(noise);
  else if (!same && gain !== undefined && Math.abs(gain) < SMALL_GAIN) {
    lines.push(
      `note: the gain over the current values is small (${change(file.best.objective, file.baseline.objective).slice(2)}); one seed is one sample, so check it with another --seed before adopting it`,
    );
  }
  return lines.join('\n');
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}

/** Rows of label, best, current: the parameters, the objective, each constraint, the headline figures. */
function figuresTable(file: TuneFile): string {
  const b = file.best;
  const c = file.baseline;
  const rows: string[][] = [['', file.feasible ? 'best' : 'least bad', 'current']];
  file.params.forEach((p, i) => rows.push([p.path, paramValue(p, b.values[i]), paramValue(p, c.values[i])]));
  rows.push([`${file.objective.text} (${file.objective.direction})`, objective(file, b), objective(file, c)]);
  file.constraints.forEach((k, i) => rows.push([k.text, mark(k, b.constraints[i]), mark(k, c.constraints[i])]));
  const shown = new Set([file.objective.metric, ...file.constraints.map((k) => k.metric)]);
  for (const [metric, label, fmt] of STANDARD) {
    if (!shown.has(metric)) rows.push([label, fmt(b.figures), fmt(c.figures)]);
  }
  return table(rows);
}

function mark(c: TuneConstraint, f: TuneConstraintFigure): string {
  return `${constraintValue(c, f)} ${f.holds ? 'held' : 'FAILED'}`;
}

const STANDARD: Array<[string, string, (f: PointFigures) => string]> = [
  ['amplification', 'amplification', (f) => formatTimes(f.amplification)],
  ['goodput', 'goodput', (f) => formatRate(f.goodput)],
  ['successRate', 'success', (f) => formatPercent(f.successRate)],
  ['roots.latencyMs.p99', 'p99', (f) => formatMs(f.p99Ms)],
];

function table(rows: string[][]): string {
  const widths = rows[0].map((_, j) => Math.max(...rows.map((r) => r[j].length)));
  return rows
    .map((r) =>
      `  ${r.map((cell, j) => (j === 0 ? cell.padEnd(widths[j]) : cell.padStart(widths[j]))).join('   ')}`.trimEnd(),
    )
    .join('\n');
}

function searchLog(file: TuneFile): string {
  const s = file.search;
  const why = s.stopped === 'budget' ? `the budget of ${s.budget} was spent` : 'the box became small';
  const k = file.seeds?.length ?? 1;
  const lines = [
    `search: ${s.evaluations} points + the current values${k > 1 ? `, × ${k} seeds` : ''} = ${(s.evaluations + 1) * k} runs in ${s.rounds.length} round${s.rounds.length === 1 ? '' : 's'}; stopped as ${why}`,
  ];
  const refused = file.refused ?? [];
  if (refused.length > 0) {
    const point = file.params.map((p, i) => `${p.path}=${paramValue(p, refused[0].values[i])}`).join(' ');
    lines.push(refusedLine(refused.length, s.evaluations + 1, { point, reason: refused[0].reason }));
  }
  for (const r of s.rounds) {
    const box = file.params
      .map((p, i) => `${shortName(p.path)} ${paramValue(p, round3(r.box[i][0]))}–${paramValue(p, round3(r.box[i][1]))}`)
      .join(', ');
    const best = file.params.map((p, i) => paramValue(p, r.best[i])).join(', ');
    const count = r.reused > 0 ? `${r.evaluated} new, ${r.reused} reused` : `${r.evaluated} points`;
    lines.push(`  round ${r.round}  ${count.padEnd(18)} ${box}  → best ${best}`);
  }
  return lines.join('\n');
}

/** `engine.retryBudget.ratio` → `retryBudget.ratio`: the log's boxes stay on one line. */
function shortName(path: string): string {
  return path.startsWith('engine.') ? path.slice('engine.'.length) : path;
}

function round3(v: number): number {
  return Number(v.toPrecision(3));
}

/** `p99 < 2s` → `p99`: the metric as the user named it. */
function metricAsWritten(c: TuneConstraint): string {
  return /^(.+?)\s*(?:<=|>=|==|!=|=|<|>)/.exec(c.text)?.[1] ?? c.metric;
}

function runnersUp(file: TuneFile): string {
  const rest = file.points.slice(1, 1 + RUNNERS_UP);
  if (rest.length === 0) return '';
  const rows = rest.map((p) => [
    file.params.map((q, i) => `${shortName(q.path)}=${paramValue(q, p.values[i])}`).join(' '),
    `${file.objective.text} ${objective(file, p)}`,
    ...file.constraints.map((c, i) => `${metricAsWritten(c)} ${mark(c, p.constraints[i])}`),
  ]);
  const widths = rows[0].map((_, j) => Math.max(...rows.map((r) => r[j].length)));
  return [
    'runners-up',
    ...rows.map((r) => `  ${r.map((cell, j) => cell.padEnd(widths[j])).join('   ')}`.trimEnd()),
  ].join('\n');
}
