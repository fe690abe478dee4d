import { htmlPage } from './html-page.js';
import type { ReportInput } from '../report-input.js';
import { resultReport } from './result-report.js';
import { sweepReport } from './sweep-report.js';

/** The self-contained HTML report of a result or sweep file: one file, no network, the data inside. */
export function htmlReport(input: ReportInput): string {
  const page = input.kind === 'result' ? resultReport(input.file) : sweepReport(input.file);
  return htmlPage(page.title, page.body, { kind: input.kind, source: input.file, charts: page.charts });
}
