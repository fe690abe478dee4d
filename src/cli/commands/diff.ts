import type { ResultFile } from '../../run/metrics/result.js';
import { DIFF_FLOORS } from '../../gate/diff-metrics.js';
import { commonVariants, compareResults, resultMetrics, type DiffRow } from '../../gate/diff-results.js';
import {
  checkToleranceNames,
  describeTolerance,
  parseTolerances,
  type DiffTolerance,
} from '../../gate/diff-tolerance.js';
import { GateError } from '../../gate/gate-error.js';
import { readResultFile } from '../read-input-file.js';
import { partialGate, reportChecks, type GateFlags } from '../gate-outputs.js';
import { UsageError, type Io } from '../io.js';
import { writeOutput } from '../write-output.js';

export interface DiffFlags extends GateFlags {
  /** `5%`, `0.05`, `amplification=2%`; repeatable. */
  tolerance?: string[];
  json?: string;
  /** Judge partial results anyway (else exit 3), flagged in every output. */
  allowPartial?: boolean;
}

export const DIFF_SCHEMA = 'stormlab.diff/v1';

/**
 * `stormlab diff <base> <new>`: judges a result against a baseline (see `compareResults`),
 * prints what was compared and the table of checks, writes --junit, --markdown and --json,
 * and returns the exit code.
 */
export function diffCommand(io: Io, basePath: string, newPath: string, flags: DiffFlags): number {
  const tolerance = gate(() => parseTolerances(flags.tolerance ?? []));
  const base = readResultFile(io, basePath);
  const next = readResultFile(io, newPath);
  gate(() => checkToleranceNames(tolerance, resultMetrics(base, next)));
  const flagged = partialGate(
    io,
    [
      [basePath, base],
      [newPath, next],
    ],
    flags.allowPartial,
  );
  const common = commonVariants(base, next);
  if (common.length === 0) {
    throw new UsageError(`no variant in common: ${basePath} has ${names(base)}, ${newPath} has ${names(next)}`);
  }
  warnIfIncomparable(io, [basePath, base], [newPath, next]);
  const rows = compareResults(base, next, tolerance);
  const checks = rows.map((r) => r.check);
  if (!flags.quiet)
    io.stdout(
      `comparing ${newPath} with ${basePath}: ${next.scenario}, seed ${next.seed} · variants ${common.join(', ')} · tolerance ${describeTolerance(tolerance)}${flagged}\n`,
    );
  const title = `stormlab diff ${base.scenario === next.scenario ? next.scenario : `${base.scenario} → ${next.scenario}`}${flagged}`;
  const code = reportChecks(io, title, checks, flags);
  if (!flags.quiet) io.stdout(improvements(rows));
  if (flags.json !== undefined)
    writeOutput(io, '--json', flags.json, diffJson(basePath, base, newPath, next, tolerance, rows));
  return code;
}

/** Gate errors (a bad --tolerance, a bad file) are the user's to fix: one line, exit 2. */
function gate<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof GateError) throw new UsageError(e.message);
    throw e;
  }
}

function names(file: ResultFile): string {
  return file.variants.length === 0 ? 'no variants' : `variants ${file.variants.map((v) => v.name).join(', ')}`;
}

/** One line on stderr when the two runs are not of the same scenario, seed and mode: compared anyway. */
function warnIfIncomparable(io: Io, [bp, b]: [string, ResultFile], [np, n]: [string, ResultFile]): void {
  const diffs = (['scenario', 'seed', 'mode'] as const)
    .filter((k) => b[k] !== n[k])
    .map((k) => `${k} (${String(b[k])} vs ${String(n[k])})`);
  if (diffs.length === 0) return;
  io.stderr(
    `stormlab: warning: ${bp} and ${np} differ in ${diffs.join(' and ')}: their figures are not comparable point for point; comparing anyway\n`,
  );
}

/** `improved beyond the tolerance: engine amplification, engine roots.p99`, or nothing. */
function improvements(rows: readonly DiffRow[]): string {
  const better = rows.filter((r) => r.verdict === 'improved').map((r) => `${r.check.group} ${r.check.name}`);
  return better.length === 0 ? '' : `improved beyond the tolerance: ${better.join(', ')}\n`;
}

function diffJson(
  bp: string,
  base: ResultFile,
  np: string,
  next: ResultFile,
  tolerance: DiffTolerance,
  rows: readonly DiffRow[],
): string {
  const about = (file: string, r: ResultFile) => ({
    file,
    scenario: r.scenario,
    seed: r.seed,
    mode: r.mode,
    ...(r.partial === true ? { partial: true } : {}),
  });
  const doc = {
    schema: DIFF_SCHEMA,
    base: about(bp, base),
    new: about(np, next),
    tolerance: { default: tolerance.default, metrics: tolerance.metrics, floors: DIFF_FLOORS },
    checks: rows.map((r) => ({ ...r.check, verdict: r.verdict })),
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}
