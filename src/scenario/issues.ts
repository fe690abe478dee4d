import type { z } from 'zod';
import { formatSegments } from './set-override.js';

/**
 * `['layers', 1, 'fanout']` → `layers[1].fanout`, as a `--set` path writes it (a key with dots
 * or control characters quoted: `tools["gmail.send"]`); the root is `(top level)`.
 */
export function formatPath(path: readonly PropertyKey[]): string {
  const out = formatSegments(path.map((seg) => (typeof seg === 'number' ? { index: seg } : { key: String(seg) })));
  return out === '' ? '(top level)' : out;
}

/**
 * One line per problem: `<path>: <message>`. The schema wrote the messages (see schema-kit);
 * an unknown-keys issue covers several keys, its message holding one suggestion line per key,
 * and becomes one line per key: `layers[0].fan_out: unknown key (did you mean fanout?)`.
 */
export function issueLines(issues: readonly z.core.$ZodIssue[]): string[] {
  const lines: string[] = [];
  for (const iss of issues) {
    if (iss.code === 'unrecognized_keys') {
      const hints = iss.message.split('\n');
      iss.keys.forEach((k, i) => lines.push(`${formatPath([...iss.path, k])}: unknown key${hints[i] ?? ''}`));
    } else if (iss.code === 'invalid_key' && iss.issues.length > 0) {
      // A key a record refuses (a tool name with a control character): the key's own words.
      lines.push(`${formatPath(iss.path)}: ${iss.issues[0].message}`);
    } else {
      lines.push(`${formatPath(iss.path)}: ${iss.message}`);
    }
  }
  return lines;
}
