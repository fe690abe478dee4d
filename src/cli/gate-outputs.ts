import { colorWanted } from './color-wanted.js';
import type { Check } from '../report/check.js';
import type { ResultNote } from '../run/metrics/result.js';
import { tally } from '../report/check.js';
import { checkTable } from '../report/check-table.js';
import { junitXml } from '../report/junit.js';
import { markdownChecks } from '../report/markdown-checks.js';
import type { ResultFile } from '../run/metrics/result.js';
import { EXIT, PartialResultError, type Io } from './io.js';
import { writeOutput } from './write-output.js';
import { formatDuration } from '../scenario/duration.js';

export interface GateFlags {
  /** Write the checks as JUnit XML here. */
  junit?: string;
  /** Write a Markdown summary here (for `$GITHUB_STEP_SUMMARY`). */
  markdown?: string;
  quiet?: boolean;
}

/**
 * Shows a gate's checks (the table on stdout; with --quiet only the failures), writes --junit
 * and --markdown, and returns the exit code: 1 when a check failed, else 0. `title` names the
 * gate in the files (`stormlab retry-storm`); `inTable` picks the checks the terminal table
 * shows (all by default), the files always get every check, and the result's `notes` (the
 * summary shows them on the terminal).
 */
export function reportChecks(
  io: Io,
  title: string,
  checks: readonly Check[],
  flags: GateFlags,
  inTable: readonly Check[] = checks,
  notes: readonly ResultNote[] = [],
): number {
  const color = colorWanted(io);
  const shown = flags.quiet ? inTable.filter((c) => c.status === 'fail') : inTable;
  if (shown.length > 0) io.stdout(`\n${checkTable(shown, { color, verdictOf: inTable })}`);
  if (flags.junit !== undefined) writeOutput(io, '--junit', flags.junit, junitXml(title, checks, notes));
  if (flags.markdown !== undefined) writeOutput(io, '--markdown', flags.markdown, markdownChecks(title, checks, notes));
  return tally(checks).ok ? EXIT.ok : EXIT.failed;
}

/**
 * The partial results among a gate's files (`[path, file]`): refused, exit 3, unless
 * `allowPartial`; then a warning on stderr, and the words every output of the gate carries in
 * its title (the JUnit suites, the Markdown heading): ` (partial result: new.json)`. '' when none is partial.
 */
export function partialGate(
  io: Io,
  files: ReadonlyArray<readonly [string, ResultFile]>,
  allowPartial: boolean | undefined,
): string {
  const partial = files.filter(([, f]) => f.partial === true);
  if (partial.length === 0) return '';
  const paths = partial.map(([p]) => p).join(' and ');
  const why = partial.length === 1 ? stoppedWhere(partial[0][1]) : '';
  if (allowPartial !== true)
    throw new PartialResultError(
      `${paths} ${partial.length === 1 ? 'is a partial result' : 'are partial results'}${why}: part of a run proves nothing either way; --allow-partial judges it anyway, flagged`,
    );
  io.stderr(
    `stormlab: warning: ${paths} ${partial.length === 1 ? 'is a partial result' : 'are partial results'}${why}; judged anyway (--allow-partial)\n`,
  );
  return ` (partial result: ${paths})`;
}

/** ` (the run was stopped at 12s of 1m)`, from the file's partial note; '' without one. */
function stoppedWhere(file: ResultFile): string {
  const note = file.notes?.find((n) => n.kind === 'partial');
  return note?.kind === 'partial'
    ? ` (stopped at ${formatDuration(note.stoppedAtMs)} of ${formatDuration(note.durationMs)})`
    : '';
}
