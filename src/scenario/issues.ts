import type { z } from 'zod';

/** `['layers', 1, 'fanout']` → `layers[1].fanout`; the root is `(top level)`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? String(seg) : `.${String(seg)}`;
  }
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
    } else {
      lines.push(`${formatPath(iss.path)}: ${iss.message}`);
    }
  }
  return lines;
}
