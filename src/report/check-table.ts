import type { Check } from './check.js';
import { tally } from './check.js';

export interface CheckTableOptions {
  /** ANSI colours: green for held, red for failed, yellow for skipped. @default false */
  color: boolean;
  /** The checks the verdict line counts, when the table shows only some (the failures, with --quiet). @default the checks shown */
  verdictOf: readonly Check[];
}

const MARK = { pass: 'held', fail: 'FAILED', skip: 'skipped' } as const;
const ANSI = { pass: '32', fail: '31', skip: '33' } as const;

function paint(text: string, status: Check['status'], color: boolean): string {
  return color ? `\x1b[${ANSI[status]}m${text}\x1b[0m` : text;
}

/**
 * What held and what did not, one line per check with its figures, then a verdict line:
 *
 *     held     engine  amplification < 1.5      1.07×     < 1.5×
 *     FAILED   naive   amplification < 1.5      27.0×     < 1.5×
 *     1 of 2 expectations failed
 *
 * Columns are padded to the widest entry; a failed or skipped check's reason follows on its
 * own indented line.
 */
export function checkTable(checks: readonly Check[], opts: Partial<CheckTableOptions> = {}): string {
  const color = opts.color ?? false;
  if (checks.length === 0) return 'no expectations to check\n';
  const w = (f: (c: Check) => string): number => Math.max(...checks.map((c) => f(c).length));
  const wm = w((c) => MARK[c.status]);
  const wg = w((c) => c.group);
  const wn = w((c) => c.name);
  const wa = w((c) => c.actual || '—');
  const lines: string[] = [];
  for (const c of checks) {
    const mark = paint(MARK[c.status].padEnd(wm), c.status, color);
    lines.push(
      `${mark}  ${c.group.padEnd(wg)}  ${c.name.padEnd(wn)}  ${(c.actual || '—').padStart(wa)}  ${c.expected}`.trimEnd(),
    );
    if (c.status !== 'pass' && c.message !== undefined) lines.push(`${' '.repeat(wm + 2)}${c.message}`);
  }
  lines.push(verdict(opts.verdictOf ?? checks));
  return `${lines.join('\n')}\n`;
}

/** `all 4 checks held`, `1 of 4 checks failed`, with skips counted when there are any. */
export function verdict(checks: readonly Check[]): string {
  const t = tally(checks);
  const skipped = t.skip > 0 ? `, ${t.skip} skipped` : '';
  const n = (k: number): string => `${k} ${k === 1 ? 'check' : 'checks'}`;
  if (!t.ok) return `${t.fail} of ${n(checks.length)} failed${skipped}`;
  if (t.pass === 0) return `no check could be judged${skipped}`;
  return t.skip === 0 ? `all ${n(t.pass)} held` : `${n(t.pass)} held${skipped}`;
}
