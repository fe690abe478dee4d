import type { Check } from './check.js';
import { tally } from './check.js';

/**
 * The five characters XML needs escaped in text and attributes, and none of those XML 1.0
 * cannot hold at all: control characters, U+FFFE, U+FFFF and unpaired surrogates (a strict
 * consumer rejects the whole file for one of them).
 */
function xml(text: string): string {
  return text
    .replace(
      /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
      '',
    )
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/**
 * JUnit XML as CI systems read it (GitHub, GitLab, Jenkins): one `<testsuite>` per group
 * (variant), one `<testcase>` per check, `<failure>` for a failed one and `<skipped>` for one
 * that could not be judged. `suite` names the whole (`stormlab retry-storm`).
 */
export function junitXml(suite: string, checks: readonly Check[]): string {
  const groups = [...new Set(checks.map((c) => c.group))];
  const all = tally(checks);
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${xml(suite)}" tests="${checks.length}" failures="${all.fail}" skipped="${all.skip}" errors="0">`,
  ];
  for (const group of groups) {
    const mine = checks.filter((c) => c.group === group);
    const t = tally(mine);
    lines.push(
      `  <testsuite name="${xml(`${suite} · ${group}`)}" tests="${mine.length}" failures="${t.fail}" skipped="${t.skip}" errors="0">`,
    );
    for (const c of mine) lines.push(...testCase(suite, c));
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>', '');
  return lines.join('\n');
}

function testCase(suite: string, c: Check): string[] {
  const open = `    <testcase classname="${xml(`${suite}.${c.group}`)}" name="${xml(c.name)}"`;
  const figures = `actual ${c.actual || '—'}, expected ${c.expected}`;
  if (c.status === 'pass') return [`${open}/>`];
  if (c.status === 'skip')
    return [`${open}>`, `      <skipped message="${xml(c.message ?? 'not judged')}"/>`, '    </testcase>'];
  return [
    `${open}>`,
    `      <failure message="${xml(c.message ?? figures)}" type="expectation">${xml(figures)}</failure>`,
    '    </testcase>',
  ];
}
