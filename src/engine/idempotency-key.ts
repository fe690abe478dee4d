import { OptionError } from './errors.js';
import { checkNonEmptyString } from './options.js';

/** What a write is meant to do. Two calls with the same intent must get the same key. */
export interface IdempotencyKeyParts {
  tenant: string;
  user: string;
  /** The side effect, e.g. `send_email`, `create_ticket`, `charge`. */
  action: string;
  /** What it acts on, e.g. a thread, order or ticket id. */
  resource: string;
  /** Version of the resource or of the user's intent (`v3`, or a number: `3` and `"3"` are the same key). */
  version: string | number;
}

const PART_NAMES = ['tenant', 'user', 'action', 'resource', 'version'] as const;

/**
 * `tenant:user:action:resource:version`, e.g. `t1:u9:send_email:thread123:v3`.
 *
 * The key is bound to business intent, not to a request: a retry, a redelivered queue message
 * or a user's double click carries the same intent and therefore the same key, so the side
 * effect happens once. (A per-request id would differ on each of those and protect nothing.)
 *
 * `%` and `:` inside a part are percent-encoded (`%25`, `%3A`), so every encoded part is free
 * of `:` and the five parts can be read back unambiguously: distinct part tuples can never
 * produce the same key (`a:b` + `c` vs `a` + `b:c`).
 */
export function idempotencyKey(parts: IdempotencyKeyParts): string {
  if (parts === null || typeof parts !== 'object')
    throw new OptionError(`idempotencyKey parts must be an object, got ${String(parts)}`, 'idempotencyKey');
  let key = '';
  for (const name of PART_NAMES) {
    const text = partText(name, parts[name]);
    key += (key === '' ? '' : ':') + escapePart(text);
  }
  return key;
}

/** Reads a key made by `idempotencyKey` back into its parts (`version` comes back as a string). */
export function parseIdempotencyKey(key: string): {
  tenant: string;
  user: string;
  action: string;
  resource: string;
  version: string;
} {
  const pieces = key.split(':');
  if (pieces.length !== PART_NAMES.length || pieces.some((p) => p === '')) {
    throw new OptionError(
      `idempotency key must have ${PART_NAMES.length} non-empty parts separated by ":", got ${JSON.stringify(key)}`,
      'idempotency key',
    );
  }
  const [tenant, user, action, resource, version] = pieces.map(unescapePart);
  return { tenant, user, action, resource, version };
}

function partText(name: (typeof PART_NAMES)[number], value: unknown): string {
  const label = `idempotencyKey.${name}`;
  if (name === 'version' && typeof value === 'number') {
    if (!Number.isFinite(value))
      throw new OptionError(`${label} must be a non-empty string or a finite number, got ${value}`, label, { value });
    return String(value);
  }
  return checkNonEmptyString(label, value);
}

// `%` is escaped first, so the `%` of a `%3A` we add is never escaped again.
function escapePart(text: string): string {
  return text.replace(/%/g, '%25').replace(/:/g, '%3A');
}

// One left-to-right pass: a text `%3A` (encoded `%253A`) must come back as `%3A`, not `:`.
function unescapePart(text: string): string {
  return text.replace(/%(25|3A)/g, (m) => (m === '%25' ? '%' : ':'));
}
