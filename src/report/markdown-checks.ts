import type { ResultNote } from '../run/metrics/result.js';
import type { Check } from './check.js';
import { tally } from './check.js';

const MARK = { pass: '✅ held', fail: '❌ failed', skip: '⏭️ skipped' } as const;

/** A table cell: pipes escaped, one line. */
function md(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\r?\n|\r/g, ' ');
}

/**
 * Inline code that survives backticks in the text: the fence is one backtick longer than the
 * longest run inside, padded with spaces when the text starts or ends with one (CommonMark's rule).
 */
function code(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${md(text)}${pad}${fence}`;
}

/**
 * The heading's verdict. Skipped checks are not held ones: a gate whose every check was skipped
 * (a live-only metric on a simulated run) must not read "all held".
 */
function headline(checks: readonly Check[]): string {
  const t = tally(checks);
  if (!t.ok) return `❌ ${t.fail} of ${checks.length} failed`;
  if (t.pass === 0 && t.skip > 0) return `⏭️ none could be judged, ${t.skip} skipped`;
  return t.skip === 0 ? '✅ all expectations held' : `✅ ${t.pass} held, ${t.skip} skipped`;
}

/**
 * A Markdown summary of a gate, for a CI step summary (`$GITHUB_STEP_SUMMARY`): a heading that
 * says whether it held, the result's notes (what its figures must be read with), then one
 * table row per check with its figures.
 */
export function markdownChecks(title: string, checks: readonly Check[], notes: readonly ResultNote[] = []): string {
  const lines = [`### ${md(title)}: ${headline(checks)}`, ''];
  if (notes.length > 0) lines.push(...notes.map((n) => `- **Note:** ${md(n.message)}`), '');
  if (checks.length === 0) return `${[...lines, '_No expectations were given._'].join('\n')}\n`;
  lines.push('| | check | variant | actual | expected | note |', '|---|---|---|---|---|---|');
  for (const c of checks) {
    lines.push(
      `| ${MARK[c.status]} | ${code(c.name)} | ${md(c.group)} | ${md(c.actual || '—')} | ${md(c.expected)} | ${md(c.message ?? '')} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}
