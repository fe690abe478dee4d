import type { PointJob, WorkerChoice, WorkerCount } from '../../explore/run-points.js';
import { MAX_POINTS } from '../../explore/sweep-params.js';
import { overrideLines } from '../../report/override-lines.js';
import { budgetNotes } from '../../scenario/budget-notes.js';
import { resolveScenario } from '../../scenario/resolve-scenario.js';
import type { EffectiveRun, ScenarioRequest } from '../../scenario/scenario-request.js';
import { UsageError, type Io } from '../io.js';
import { scenarioSets, type ScenarioFlags } from '../scenario-args.js';

/** A flag's whole number of at least 1, or `fallback` when not given. */
export function positiveInt(flag: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^\s*\d+\s*$/.test(raw) || Number(raw) < 1)
    throw new UsageError(`${flag}: expected a whole number of at least 1, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

/**
 * Seeds count in the cap on a sweep's or tune's simulations (`MAX_POINTS`, 10,000): every
 * point runs once per seed, so `points × seeds` is what would run. Over it is one line, exit 2.
 */
export function runCap(flag: string, points: number, seeds: number, what: string): void {
  if (points * seeds <= MAX_POINTS) return;
  const n = (x: number): string => x.toLocaleString('en-US');
  throw new UsageError(
    `${flag}: ${n(points)} ${what} × ${n(seeds)} seeds = ${n(points * seeds)} simulations, more than a sweep or tune runs (${n(MAX_POINTS)}); give fewer seeds`,
  );
}

/** `--workers`: a whole number of at least 1, or `auto` (the default). */
export function parseWorkers(raw: string | undefined): WorkerCount {
  if (raw === undefined || raw.trim() === 'auto') return 'auto';
  if (!/^\s*\d+\s*$/.test(raw) || Number(raw) < 1)
    throw new UsageError(`--workers: expected a whole number of at least 1, or auto, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

/** `--workers` as the start line says it: `2 workers`, `auto workers`. */
export function workersText(w: WorkerCount, points: number): string {
  if (w === 'auto') return 'auto workers';
  const used = Math.min(w, points);
  return `${used} worker${used === 1 ? '' : 's'}`;
}

/**
 * The line saying what `--workers auto` chose, from the cost of the first points: on stderr,
 * so a user sees why a sweep ran on one core. Nothing for a count the user gave.
 */
export function workerChoiceLine(c: WorkerChoice): string | undefined {
  if (!c.auto) return undefined;
  const cost = c.pointMs === undefined ? '' : `a point takes ${formatMs(c.pointMs)} here`;
  return c.used === 1
    ? `workers: auto chose 1, this thread (${cost}: starting threads would cost more than they save)`
    : `workers: auto chose ${c.used} worker threads (${cost}: threads pay for their start-up)`;
}

/** What `-q` adds when `auto` chose: ` · 1 worker (auto)`. */
export function quietWorkers(c: WorkerChoice | undefined): string {
  return c?.auto === true ? ` · ${c.used} worker${c.used === 1 ? '' : 's'} (auto)` : '';
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.max(1, Math.round(ms))} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/**
 * What every point of a sweep or tune starts from: the scenario, the variant (`--variant`,
 * else `engine` when the scenario has it, else the scenario as written) and the command
 * line's overrides, resolved once and checked whole; and the job the points carry. A point
 * adds its values to the command line's, last: they win over the variant's, as `--set` does.
 */
export interface PointBase {
  req: ScenarioRequest;
  run: EffectiveRun;
  job: PointJob;
}

export function pointBase(io: Io, arg: string, flags: ScenarioFlags & { variant?: string }): PointBase {
  const wanted = flags.variant;
  if (wanted !== undefined && (wanted.includes(',') || wanted.trim() === ''))
    throw new UsageError(`--variant: expected one variant name, got ${JSON.stringify(wanted)}`);
  const req: ScenarioRequest = {
    arg,
    cwd: io.cwd,
    set: scenarioSets(flags),
    variants: wanted === undefined ? { prefer: 'engine' } : [wanted.trim()],
    flag: '--variant',
    checkFile: true,
  };
  const run = resolveScenario(req).runs[0];
  // Said once for the sweep or search, of the scenario every point starts from.
  for (const note of budgetNotes([run])) io.stderr(`note: ${note}\n`);
  const job: PointJob = { scenario: arg, cwd: io.cwd, set: (req.set ?? []).map((s) => s.text), variant: run.variant };
  return { req, run, job };
}

/** The request of a point with `values` (`path=value` texts) on top of the base: its run alone. */
export function withValues(base: PointBase, values: readonly string[]): ScenarioRequest {
  return {
    ...base.req,
    variants: base.run.variant === undefined ? undefined : [base.run.variant],
    set: [...(base.req.set ?? []), ...values.map((text) => ({ text, from: '--set' }))],
    checkFile: false,
  };
}

/** The fields the variant and the command line set before any point's values, on stderr (as a run's summary lists them). */
export function printOverrides(io: Io, run: EffectiveRun): void {
  // Only when the command line set something: a variant's own overrides are what the variant is.
  if (run.overrides.every((o) => o.from.startsWith('variant '))) return;
  const lines = overrideLines([{ effective: { document: run.scenario.document, overrides: run.overrides } }]);
  io.stderr(`every point runs with (its own values win over these):\n${lines.join('\n')}\n`);
}

/** Writes what `auto` chose on stderr (unless quiet) and keeps it for the `-q` line. */
export function workerReporter(
  io: Io,
  quiet: boolean | undefined,
): { onWorkers(c: WorkerChoice): void; chosen?: WorkerChoice } {
  const r: { onWorkers(c: WorkerChoice): void; chosen?: WorkerChoice } = {
    onWorkers(c) {
      if (r.chosen?.auto) return;
      r.chosen = c;
      const line = workerChoiceLine(c);
      if (line !== undefined && !quiet) io.stderr(`${line}\n`);
    },
  };
  return r;
}
