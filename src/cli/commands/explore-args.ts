import type { WorkerChoice, WorkerCount } from '../../explore/run-points.js';
import type { Scenario } from '../../scenario/scenario.js';
import { UsageError, type Io } from '../io.js';
import { pickVariants } from '../scenario-args.js';

/** A flag's whole number of at least 1, or `fallback` when not given. */
export function positiveInt(flag: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^\s*\d+\s*$/.test(raw) || Number(raw) < 1)
    throw new UsageError(`${flag}: expected a whole number of at least 1, got ${JSON.stringify(raw)}`);
  return Number(raw);
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

/** `--variant`, else `engine` when the scenario has it, else the scenario as written. */
export function pickVariant(
  scenario: Scenario,
  wanted: string | undefined,
): { name: string; scenario: Scenario; asWritten: boolean } {
  if (wanted !== undefined && (wanted.includes(',') || wanted.trim() === ''))
    throw new UsageError(`--variant: expected one variant name, got ${JSON.stringify(wanted)}`);
  const name = wanted ?? (scenario.variants.some((v) => v.name === 'engine') ? 'engine' : undefined);
  if (name === undefined) return { name: scenario.name, scenario, asWritten: true };
  return { ...pickVariants(scenario, name, '--variant')[0], asWritten: false };
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
