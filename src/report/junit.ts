import type { ResultNote } from '../run/metrics/result.js';
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
 * that could not be judged. `suite` names the whole (`stormlab retry-storm`). The result's
 * notes (a stopped run, roots the drain cut off) go in the `<system-out>` of the suites they
 * concern — every suite for a note about the whole run — where CI systems show them.
 */
export function junitXml(suite: string, checks: readonly Check[], notes: readonly ResultNote[] = []): string {
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
    const said = notes.filter((n) => concerns(n, group)).map((n) => n.message);
    if (said.length > 0) lines.push(`    <system-out>${xml(said.join('\n'))}</system-out>`);
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>', '');
  return lines.join('\n');
}

/** Whether a note is about variant `group` (or about the whole run). */
function concerns(n: ResultNote, group: string): boolean {
  if (n.kind === 'partial') return true;
  if (n.kind === 'skipped-expectations') return n.variants.includes(group);
  return n.variant === group;
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
