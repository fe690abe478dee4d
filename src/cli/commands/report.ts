import { colorWanted } from '../color-wanted.js';
import { sig3 } from '../../report/format.js';
import { htmlReport } from '../../report/html/html-report.js';
import { sweepPointsTable } from '../../report/html/sweep-points-table.js';
import { summaryTable } from '../../report/summary-table.js';
import { evaluateExpectations } from '../../gate/evaluate-expectations.js';
import { GateError } from '../../gate/gate-error.js';
import { parseExpectation, type Expectation } from '../../gate/expectation.js';
import { MetricCatalog } from '../../gate/metric-catalog.js';
import type { ResultFile } from '../../run/metrics/result.js';
import { partialGate, reportChecks, type GateFlags } from '../gate-outputs.js';
import { EXIT, UsageError, type Io } from '../io.js';
import { readInputFile } from '../read-input-file.js';
import { writeOutput } from '../write-output.js';

export interface ReportFlags extends GateFlags {
  /** Write the self-contained HTML report here. */
  html?: string;
  /** Expectations to judge the saved result by (repeatable), as run and compare take them. */
  expect?: string[];
  /** Judge a partial result anyway (else exit 3), flagged in every output. */
  allowPartial?: boolean;
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
  const gated = flags.expect !== undefined || flags.junit !== undefined || flags.markdown !== undefined;
  if (gated && input.kind !== 'result')
    throw new UsageError(
      `--expect, --junit and --markdown judge a result file (run or compare --json); ${path} is a sweep`,
    );
  const expectations = input.kind === 'result' ? expectationsOf(input.file, flags.expect ?? []) : [];
  const flagged = gated ? partialGate(io, [[path, input.file as ResultFile]], flags.allowPartial) : '';
  if (flags.html !== undefined) {
    const html = htmlReport(input);
    writeOutput(io, '--html', flags.html, html);
    io.stdout(`wrote ${flags.html} (${size(html)})\n`);
  } else {
    const color = colorWanted(io);
    io.stdout(input.kind === 'result' ? summaryTable(input.file, { color, width: 80 }) : sweepPointsTable(input.file));
  }
  if (!gated) return EXIT.ok;
  const file = input.file as ResultFile;
  const checks = evaluateExpectations(expectations, file);
  return reportChecks(io, `stormlab ${file.scenario}${flagged}`, checks, flags, checks, file.notes);
}

/**
 * The --expect of a saved result (a live run's, gated in a later CI step), checked before
 * anything is printed: metric names are those of the file's own layers, models and variants.
 */
function expectationsOf(file: ResultFile, texts: readonly string[]): Expectation[] {
  const catalog = MetricCatalog.ofResult(file);
  const variants = file.variants.map((v) => v.name);
  return texts.map((text) => {
    try {
      return parseExpectation(text, catalog, variants);
    } catch (e) {
      if (e instanceof GateError) throw new UsageError(`--expect ${JSON.stringify(text)}: ${e.message}`);
      throw e;
    }
  });
}
