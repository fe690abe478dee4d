import type { ResultFile, ResultNote, RunResult } from '../run/metrics/result.js';
import { formatDuration } from '../scenario/duration.js';
import { formatCount, formatPercent } from './format.js';
import { fleetNotes } from './fleet-notes.js';
import { hopNotes } from './hop-notes.js';

export interface NoteContext {
  /** Each variant's drain (ms after arrivals stop that the run waits for work in flight), by name. */
  drainMs: Readonly<Record<string, number>>;
  /** Where a stopped run got to, and how long it was to run; absent for a run that ran to its end. */
  stopped?: { atMs: number; durationMs: number };
}

/**
 * What the reader of a result must know to read its figures right, one note each: a stopped
 * run, roots the drain cut off (or the stop), a variant that started no root at all,
 * expectations that were not judged, and with a gateway under test what its hops hide
 * (`hopNotes`). Every note has its one line (`message`) and its figures
 * as fields; the summary, the Markdown and JUnit files and the HTML report show the lines.
 */
export function resultNotes(file: ResultFile, ctx: NoteContext): ResultNote[] {
  const notes: ResultNote[] = [];
  if (ctx.stopped !== undefined) {
    const { atMs, durationMs } = ctx.stopped;
    notes.push({
      kind: 'partial',
      stoppedAtMs: atMs,
      durationMs,
      message: `partial result: the run was stopped at ${formatDuration(Math.round(atMs))} of ${formatDuration(durationMs)}, so its figures cover only what ran`,
    });
  }
  for (const v of file.variants) notes.push(...rootNotes(v, ctx));
  notes.push(...hopNotes(file.variants));
  notes.push(...fleetNotes(file.variants));
  notes.push(...checkNotes(file, ctx.stopped !== undefined));
  return notes;
}

function rootNotes(v: RunResult, ctx: NoteContext): ResultNote[] {
  const { offered, unfinished } = v.roots;
  if (offered === 0)
    return [
      {
        kind: 'no-roots',
        variant: v.name,
        message: `${v.name}: no root task arrived, so nothing was measured (its amplification, goodput and shares read 0, not as measured figures)`,
      },
    ];
  if (unfinished === 0) return [];
  const share = unfinished / offered;
  const drainMs = ctx.stopped === undefined ? (ctx.drainMs[v.name] ?? null) : null;
  const when =
    drainMs === null
      ? 'were still in flight when the run was stopped'
      : drainMs === 0
        ? 'had not finished when arrivals stopped (the run has no drain)'
        : `had not finished when the ${formatDuration(drainMs)} drain (the wait after arrivals stop) ran out`;
  return [
    {
      kind: 'unfinished',
      variant: v.name,
      roots: unfinished,
      share: Math.round(share * 1e6) / 1e6,
      drainMs,
      message: `${v.name}: ${formatCount(unfinished)} of ${formatCount(offered)} root tasks (${formatPercent(share)}) ${when}; they count as offered, not as ok, late or failed`,
    },
  ];
}

/** Expectations not judged: for variants this run did not make, or every one of a stopped run. */
function checkNotes(file: ResultFile, stopped: boolean): ResultNote[] {
  const checks = file.checks ?? [];
  const ran = new Set(file.variants.map((v) => v.name));
  const notRun = checks.filter((c) => !ran.has(c.group));
  const notes: ResultNote[] = [];
  if (notRun.length > 0) {
    const variants = [...new Set(notRun.map((c) => c.group))];
    const n = notRun.length;
    notes.push({
      kind: 'skipped-expectations',
      variants,
      count: n,
      reason: 'not-run',
      message: `${n} ${n === 1 ? 'expectation is' : 'expectations are'} for ${variants.length === 1 ? 'a variant' : 'variants'} not run here (${variants.join(', ')}): compare runs them`,
    });
  }
  const judged = checks.filter((c) => ran.has(c.group));
  if (stopped && judged.length > 0) {
    const n = judged.length;
    notes.push({
      kind: 'skipped-expectations',
      variants: [...new Set(judged.map((c) => c.group))],
      count: n,
      reason: 'partial',
      message: `${n} ${n === 1 ? 'expectation was' : 'expectations were'} not judged: part of a run proves nothing either way`,
    });
  }
  return notes;
}

/** The file with its notes (none: the file as it was, without a `notes` field). */
export function withNotes(file: ResultFile, ctx: NoteContext): ResultFile {
  const notes = resultNotes(file, ctx);
  if (notes.length === 0) return file;
  // `timing` stays last, as the type declares it: the one part of a file that differs between identical runs.
  const { timing, ...rest } = file;
  return { ...rest, notes, timing };
}
