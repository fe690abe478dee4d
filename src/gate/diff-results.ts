import type { ResultFile, RunResult } from '../run/metrics/result.js';
import type { Check } from '../report/check.js';
import { formatCount } from '../report/format.js';
import { DIFF_FLOORS, diffMetrics, type DiffMetric, type RootShares } from './diff-metrics.js';
import { DEFAULT_TOLERANCE, formatTolerance, toleranceFor, type DiffTolerance } from './diff-tolerance.js';

/**
 * How one compared figure came out: worse than the tolerance allows (`regressed`, a failed
 * check), better by more than it (`improved`, passes), within it (`steady`), or not judged.
 */
export type DiffVerdict = 'regressed' | 'improved' | 'steady' | 'missing' | 'unjudged';

export interface DiffRow {
  check: Check;
  verdict: DiffVerdict;
}

const DEFAULT: DiffTolerance = { default: DEFAULT_TOLERANCE, metrics: {} };

/**
 * `stormlab diff`: compares each variant of `base` with the variant of the same name in
 * `next`, metric by metric, and fails the ones that got worse by more than the tolerance (a
 * share of the base figure, never less than the metric's floor, {@link DIFF_FLOORS}). A
 * variant or layer of the base that `next` lacks fails (a gate must not pass by losing what
 * it checks); one only `next` has is skipped (nothing to compare it with).
 */
export function diffResults(base: ResultFile, next: ResultFile, tolerance: DiffTolerance = DEFAULT): Check[] {
  return compareResults(base, next, tolerance).map((r) => r.check);
}

/** {@link diffResults} with each check's verdict, so a caller can tell improvements from steady figures. */
export function compareResults(base: ResultFile, next: ResultFile, tolerance: DiffTolerance = DEFAULT): DiffRow[] {
  const rows: DiffRow[] = [];
  for (const b of base.variants) {
    const n = next.variants.find((v) => v.name === b.name);
    if (n === undefined) rows.push(variantRow(b.name, 'missing'));
    else for (const metric of pairMetrics(b, n)) rows.push(judge(metric, b, n, toleranceFor(tolerance, metric)));
  }
  for (const n of next.variants) {
    if (!base.variants.some((b) => b.name === n.name)) rows.push(variantRow(n.name, 'unjudged'));
  }
  return rows;
}

/** Every metric a diff of these files compares (for checking `--tolerance` names). */
export function resultMetrics(base: ResultFile, next: ResultFile): DiffMetric[] {
  const runs = [...base.variants, ...next.variants];
  return diffMetrics(layerNames(runs), toolNames(runs), rootShares(runs));
}

/** The variants both files have, in the base's order. */
export function commonVariants(base: ResultFile, next: ResultFile): string[] {
  return base.variants.filter((b) => next.variants.some((n) => n.name === b.name)).map((b) => b.name);
}

function layerNames(runs: readonly RunResult[]): string[] {
  return [...new Set(runs.flatMap((r) => r.layers.map((l) => l.name)))];
}

function toolNames(runs: readonly RunResult[]): string[] {
  return [...new Set(runs.flatMap((r) => (r.tools ?? []).map((t) => t.name)))];
}

function pairMetrics(b: RunResult, n: RunResult): DiffMetric[] {
  return diffMetrics(layerNames([b, n]), toolNames([b, n]), rootShares([b, n]));
}

/** The root shares either run counts: a run without tools (or stage budgets) has no such figure to compare. */
function rootShares(runs: readonly RunResult[]): RootShares {
  return {
    degraded: runs.some((r) => r.roots.degraded !== undefined),
    partial: runs.some((r) => r.roots.partial !== undefined),
  };
}

function variantRow(name: string, verdict: 'missing' | 'unjudged'): DiffRow {
  const missing = verdict === 'missing';
  const check: Check = {
    name: 'variant',
    group: name,
    status: missing ? 'fail' : 'skip',
    actual: missing ? 'missing' : 'new',
    expected: missing ? 'in the new result' : 'in the base',
    message: missing
      ? `variant ${name} is in the base but not in the new result`
      : `variant ${name} is not in the base: nothing to compare it with`,
  };
  return { check, verdict };
}

/** A figure of a run: a number (Infinity for "never"), null (none), undefined (its layer is not in the run). */
function figure(metric: DiffMetric, run: RunResult): number | null | undefined {
  const v = metric.value(run);
  return v === null && metric.nullIsNever ? Infinity : v;
}

function judge(metric: DiffMetric, bRun: RunResult, nRun: RunResult, tolerance: number): DiffRow {
  const b = figure(metric, bRun);
  const n = figure(metric, nRun);
  const head = { name: metric.name, group: bRun.name };
  const shown = (x: number | null | undefined): string => (typeof x === 'number' ? metric.format(x) : '');
  const unjudged = (message: string): DiffRow => ({
    verdict: 'unjudged',
    check: { ...head, status: 'skip', actual: shown(n), expected: `base ${shown(b) || '—'}`, message },
  });
  const missing = (message: string): DiffRow => ({
    verdict: 'missing',
    check: { ...head, status: 'fail', actual: '', expected: `base ${shown(b)}`, message },
  });
  if (b === undefined) return unjudged(`${metric.name} is not in the base (a new layer): nothing to compare it with`);
  if (n === undefined) return missing(`${metric.name} is not in the new result (its layer is gone)`);
  if (b === null)
    return unjudged(n === null ? 'neither result has this figure' : 'the base has no figure to compare with');
  if (n === null) return missing(`the new result has no figure for ${metric.name}`);
  return judgeFigures(metric, b, n, tolerance, head);
}

function judgeFigures(
  metric: DiffMetric,
  b: number,
  n: number,
  tolerance: number,
  head: Pick<Check, 'name' | 'group'>,
): DiffRow {
  const f = metric.format;
  const floor = DIFF_FLOORS[metric.family];
  const byFloor = tolerance * Math.abs(b) < floor;
  const allowed = byFloor ? floor : tolerance * Math.abs(b);
  const verdict = verdictOf(metric.higherIsBetter ? b - n : n - b, allowed, b, n);
  const limit = metric.higherIsBetter ? Math.max(0, b - allowed) : b + allowed;
  const allowance = byFloor ? `floor ${f(floor)}` : formatTolerance(tolerance);
  const [op, sign] = metric.higherIsBetter ? ['≥', '-'] : ['≤', '+'];
  const expected =
    b === Infinity ? 'any (base never)' : `${op} ${f(limit)} (base ${f(b)} ${sign}${byFloor ? ' ' : ''}${allowance})`;
  const check: Check = {
    ...head,
    status: verdict === 'regressed' ? 'fail' : 'pass',
    actual: actualText(metric, b, n, verdict),
    expected,
  };
  if (verdict === 'regressed') {
    const how =
      n === Infinity
        ? `never recovered within the run (base ${f(b)})`
        : `${metric.higherIsBetter ? 'fell' : 'rose'} ${change(metric, b, n).slice(1)} (${f(b)} → ${f(n)})`;
    check.message = `${how}, more than the ${byFloor ? `${f(floor)} floor` : `${allowance} tolerance`} allows`;
  }
  return { check, verdict };
}

/**
 * `worse` is how much worse the new figure is, in the metric's units (negative: better). The
 * slack absorbs float error at the edge: base 1 with 5 % allows 1.05 exactly. Only recovery
 * can be Infinity ("never"), and less of it is better: never is worse than any time.
 */
function verdictOf(worse: number, allowed: number, b: number, n: number): DiffVerdict {
  if (b === n) return 'steady';
  if (!Number.isFinite(n)) return 'regressed';
  if (!Number.isFinite(b)) return 'improved';
  const slack = 1e-9 * Math.max(1, Math.abs(b), Math.abs(n));
  if (worse > allowed + slack) return 'regressed';
  if (-worse > allowed + slack) return 'improved';
  return 'steady';
}

/** `1.07× (+3.2 %)`, `0.95× (-11.2 %, better)`, `0 (unchanged)`; `never`, `12.0 s (better)` against never. */
function actualText(metric: DiffMetric, b: number, n: number, verdict: DiffVerdict): string {
  const better = verdict === 'improved' ? 'better' : '';
  if (n === b) return `${metric.format(n)} (unchanged)`;
  if (!Number.isFinite(b) || !Number.isFinite(n)) return better ? `${metric.format(n)} (${better})` : metric.format(n);
  return `${metric.format(n)} (${[change(metric, b, n), better].filter(Boolean).join(', ')})`;
}

/** `+3.2 %`, `-12.0 %`, `+1,350 %`; from a base of 0, the difference itself: `+5,000`. Finite figures only. */
function change(metric: DiffMetric, b: number, n: number): string {
  const sign = n >= b ? '+' : '-';
  if (b === 0) return `${sign}${metric.format(Math.abs(n - b))}`;
  const p = (Math.abs(n - b) / Math.abs(b)) * 100;
  return `${sign}${p < 100 ? p.toFixed(1) : formatCount(p)} %`;
}
