import { describe, expect, it } from 'vitest';
import { resultReport } from '../../src/report/html/result-report.js';
import { readReportInput } from '../../src/report/report-input.js';
import { summaryTable } from '../../src/report/summary-table.js';
import { RESULT_SCHEMA, type ResultFile } from '../../src/run/metrics/result.js';
import { runAll } from '../scenario/claims.js';

function sideEffects(): ResultFile {
  const { results } = runAll('side-effects');
  return {
    schema: RESULT_SCHEMA,
    scenario: 'side-effects',
    seed: 1,
    mode: 'sim',
    variants: [results.naive, results.engine],
    timing: { wallMs: 0, attemptsPerSec: 0 },
  };
}

describe('tools in the reports', () => {
  const file = sideEffects();

  it('the summary table shows duplicates naive vs engine side by side', () => {
    const text = summaryTable(file);
    expect(text).toMatch(/tool gmail\.send\n/);
    expect(text).toMatch(/ {2}duplicates +477 +0\n/);
    expect(text).toMatch(/ {2}idempotency conflicts +0 +326\n/);
    expect(text).toMatch(/ {2}executions +1,050 +573\n/);
  });

  it('the headline (all that -q prints) gives the duplicates beside the amplification; none without side effects', () => {
    expect(summaryTable(file).split('\n')[0]).toBe(
      'amplification naive 1.21× · engine 1.19× · duplicates naive 477 · engine 0',
    );
    expect(summaryTable({ ...file, variants: [file.variants[0]] }).split('\n')[0]).toMatch(/ · duplicates 477$/);
    const bare = { ...file, variants: file.variants.map(({ tools: _t, ...v }) => v) };
    expect(summaryTable(bare).split('\n')[0]).toBe('amplification naive 1.21× · engine 1.19×');
  });

  it('the HTML report has a tools table, duplicates coloured by health', () => {
    const page = resultReport(file);
    expect(page.body).toContain('<h2>Tools and side effects</h2>');
    expect(page.body).toContain('<td>naive</td><td>gmail.send (side effect)</td>');
    expect(page.body).toContain('<td class="bad">477</td>');
    expect(page.body).toContain('<td class="good">0</td>');
  });

  it('the HTML headline puts duplicates and the degraded share beside the verdicts; a users table follows the tools', () => {
    const body = resultReport(file).body;
    const headline = body.slice(0, body.indexOf('</table>'));
    expect(headline).toContain('<th>tasks</th><th>duplicates</th><th>degraded</th><th>amplification</th>');
    expect(headline).toMatch(
      /<td>naive<\/td>(<td[^>]*>[^<]*<\/td>){2}<td class="bad">477<\/td><td class="good">0\.0 %<\/td>/,
    );
    expect(headline).toMatch(/<td>engine<\/td>(<td[^>]*>[^<]*<\/td>){2}<td class="good">0<\/td>/);
    expect(headline).not.toContain('<th>partial</th>');
    expect(body).toContain('<h2>Users and limits</h2>');
    expect(body).toMatch(/<td>naive<\/td><td>599<\/td><td>26 \(26 \/ 0\)<\/td><td>1\.05×<\/td>/);
  });

  it('the HTML report shows entry refusals per tenant and the inference queue of tenant-flood', () => {
    const { results } = runAll('tenant-flood');
    const body = resultReport({ ...file, scenario: 'tenant-flood', variants: [results.naive, results.engine] }).body;
    expect(body).toContain('<th>refused at entry</th><th>goodput flood</th>');
    expect(body).toContain(
      '<th>inference queued</th><th>estimated wait (mean / max)</th><th>gave up</th><th>fell back</th>',
    );
    const refused = results.engine.tenants!.reduce((n, t) => n + t.refused, 0);
    expect(refused).toBeGreaterThan(0);
    expect(body).toContain(`<td>${refused.toLocaleString('en-US')}</td>`);
  });

  it('a result with tools passes the report schema; one without has no tools section', () => {
    const read = readReportInput(JSON.stringify(file), 'se.json');
    expect(read.ok).toBe(true);
    const broken = { ...file, variants: [{ ...file.variants[0], tools: [{ name: 'gmail.send' }] }] };
    const bad = readReportInput(JSON.stringify(broken), 'se.json');
    expect(bad.ok).toBe(false);
    const bare = { ...file, variants: file.variants.map(({ tools: _t, users: _u, ...v }) => v) };
    expect(resultReport(bare).body).not.toContain('Tools and side effects');
  });
});
