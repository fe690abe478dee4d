import { colorWanted } from './color-wanted.js';
import type { Check } from '../report/check.js';
import type { ResultNote } from '../run/metrics/result.js';
import { tally } from '../report/check.js';
import { checkTable } from '../report/check-table.js';
import { junitXml } from '../report/junit.js';
import { markdownChecks } from '../report/markdown-checks.js';
import { EXIT, type Io } from './io.js';
import { writeOutput } from './write-output.js';

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
