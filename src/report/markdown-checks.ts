import type { Check } from './check.js';
import { tally } from './check.js';

const MARK = { pass: '✅ held', fail: '❌ failed', skip: '⏭️ skipped' } as const;

/** A table cell: pipes escaped, one line. */
function md(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

/**
 * A Markdown summary of a gate, for a CI step summary (`$GITHUB_STEP_SUMMARY`): a heading that
 * says whether it held, then one table row per check with its figures.
 */
export function markdownChecks(title: string, checks: readonly Check[]): string {
  const t = tally(checks);
  const verdict = t.ok ? '✅ all expectations held' : `❌ ${t.fail} of ${checks.length} failed`;
  const lines = [`### ${md(title)}: ${verdict}`, ''];
  if (checks.length === 0) return `${[...lines, '_No expectations were given._'].join('\n')}\n`;
  lines.push('| | check | variant | actual | expected | note |', '|---|---|---|---|---|---|');
  for (const c of checks) {
    lines.push(`| ${MARK[c.status]} | \`${md(c.name)}\` | ${md(c.group)} | ${md(c.actual || '—')} | ${md(c.expected)} | ${md(c.message ?? '')} |`);
  }
  return `${lines.join('\n')}\n`;
}
