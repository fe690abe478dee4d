/**
 * The constraint keywords a schema's `description` can carry as hints: what the Anthropic SDK
 * (`zodOutputFormat`, `transformJSONSchema`) moves out of a field's schema, because structured
 * outputs refuse them, and into its description, while it still validates the answer with the
 * original schema. Only keywords a value is drawn for; any other is left in the text.
 */
const HINTED = new Set([
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
]);

/**
 * The constraints a description states as the SDK writes them: its last paragraph is
 * `{key: <JSON>, key: <JSON>}` (`{pattern: "^[A-Z]{3}-\\d{2}$", maxLength: 6}`), after the
 * field's own description and a blank line when it has one. Read by structure (keys, then
 * each value as a whole JSON value), not by matching bytes; a paragraph that is not all of
 * that form gives none, so prose that happens to hold braces is left alone.
 */
export function descriptionHints(description: unknown): Record<string, unknown> | undefined {
  if (typeof description !== 'string') return undefined;
  const text = description.slice(description.lastIndexOf('\n\n') + 1).trim();
  if (!text.startsWith('{') || !text.endsWith('}')) return undefined;
  const out: Record<string, unknown> = {};
  let i = 1;
  if (text[i] === '}') return undefined;
  for (;;) {
    const key = /^[A-Za-z_$][\w$]*: /.exec(text.slice(i, i + 64));
    if (key === null) return undefined;
    i += key[0].length;
    const end = jsonValueEnd(text, i);
    if (end < 0) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(text.slice(i, end));
    } catch {
      return undefined;
    }
    const name = key[0].slice(0, -2);
    if (HINTED.has(name)) out[name] = value;
    i = end;
    if (text.startsWith(', ', i)) i += 2;
    else if (i === text.length - 1) break;
    else return undefined;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Where the JSON value starting at `i` ends: a string, an array or object (brackets counted outside strings), or a literal up to `,` or `}`. -1 when it does not. */
function jsonValueEnd(text: string, i: number): number {
  let depth = 0;
  for (let k = i; k < text.length; k++) {
    const c = text[k];
    if (c === '"') {
      k = stringEnd(text, k);
      if (k < 0) return -1;
      if (depth === 0) return k + 1;
    } else if (c === '[' || c === '{') depth++;
    else if (c === ']' || c === '}') {
      if (depth === 0) return k;
      depth--;
      if (depth === 0) return k + 1;
    } else if (c === ',' && depth === 0) return k;
  }
  return -1;
}

/** The index of the quote closing the JSON string opened at `i`, -1 when none. */
function stringEnd(text: string, i: number): number {
  for (let k = i + 1; k < text.length; k++) {
    if (text[k] === '\\') k++;
    else if (text[k] === '"') return k;
  }
  return -1;
}
