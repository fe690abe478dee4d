import { sig3 } from '../../report/format.js';
import { htmlReport } from '../../report/html/html-report.js';
import { sweepPointsTable } from '../../report/html/sweep-points-table.js';
import { summaryTable } from '../../report/summary-table.js';
import { EXIT, type Io } from '../io.js';
import { readInputFile } from '../read-input-file.js';
import { writeOutput } from '../write-output.js';

export interface ReportFlags {
  /** Write the self-contained HTML report here. */
  html?: string;
}

/** `1.15 MB`, `84.2 kB`: the size of what was written. */
function size(text: string): string {
  const bytes = Buffer.byteLength(text);
  return bytes >= 1e6 ? `${sig3(bytes / 1e6)} MB` : `${sig3(bytes / 1e3)} kB`;
}

/**
 * `stormlab report <file> [--html out.html]`: prints a result file's summary table or a sweep
 * file's points; with --html writes the self-contained HTML report instead.
 */
export function reportCommand(io: Io, path: string, flags: ReportFlags): number {
  const input = readInputFile(io, path);
  if (flags.html !== undefined) {
    const html = htmlReport(input);
    writeOutput(io, '--html', flags.html, html);
    io.stdout(`wrote ${flags.html} (${size(html)})\n`);
    return EXIT.ok;
  }
  const color = io.isTTY && io.env.NO_COLOR === undefined;
  io.stdout(input.kind === 'result' ? summaryTable(input.file, { color, width: 80 }) : sweepPointsTable(input.file));
  return EXIT.ok;
}
