import { resolve } from 'node:path';
import { readReportInput, type ReportInput } from '../report/report-input.js';
import type { ResultFile } from '../run/metrics/result.js';
import { escapeControls } from '../scenario/control-chars.js';
import { readBoundedFile, RESULT_MAX_BYTES, UnreadableFile } from '../scenario/read-bounded-file.js';
import { UsageError, type Io } from './io.js';

/**
 * A result or sweep file named on the command line, read and checked (`report`, `diff`):
 * what is wrong with it — unreadable, not JSON (with line:column), an unknown schema, a field
 * of the wrong shape (with its JSON path) — is one line and exit 2.
 */
export function readInputFile(io: Io, path: string, accept?: ReadonlyArray<ReportInput['kind']>): ReportInput {
  let text: string;
  // The name as messages say it: a newline or escape in it would forge or break the one line.
  const shown = escapeControls(path);
  try {
    text = readBoundedFile(resolve(io.cwd, path), RESULT_MAX_BYTES);
  } catch (e) {
    if (!(e instanceof UnreadableFile)) throw e;
    throw new UsageError(`cannot read ${shown}: ${e.reason}`);
  }
  const r = readReportInput(text, shown, accept);
  if (!r.ok) throw new UsageError(r.problem);
  return r.input;
}

/** A run or compare result file; a sweep's is refused, naming what was expected. */
export function readResultFile(io: Io, path: string): ResultFile {
  return readInputFile(io, path, ['result']).file as ResultFile;
}
