/**
 * Response headers as the engine meets them: a WHATWG `Headers` (fetch, the OpenAI v5 SDK),
 * a plain object (undici's `request`, node's `IncomingHttpHeaders`, hand-written test
 * headers), or nothing at all.
 */
export type HeaderSource =
  | { get(name: string): string | null }
  | Record<string, string | string[] | number | undefined>
  | undefined;

/**
 * The value of header `name` (pass it in lower case), or undefined.
 *
 * Plain objects are matched case-insensitively: undici and node hand out lower-case keys, but
 * users write `{ 'Retry-After': '2' }`. The exact key is tried first, so the common case costs
 * one property read; the fallback scan compares characters in place rather than lower-casing
 * every key (no allocation). Arrays give their first value, numbers their decimal form.
 */
export function header(h: HeaderSource, name: string): string | undefined {
  if (h == null || typeof h !== 'object') return undefined;
  if (typeof (h as { get?: unknown }).get === 'function') {
    const v = (h as { get(name: string): string | null }).get(name);
    return v == null ? undefined : String(v);
  }
  const record = h as Record<string, unknown>;
  let v = Object.hasOwn(record, name) ? record[name] : undefined;
  if (v === undefined) {
    for (const key in record) {
      if (Object.hasOwn(record, key) && sameLetters(key, name)) {
        v = record[key];
        break;
      }
    }
  }
  return scalar(v);
}

function scalar(v: unknown): string | undefined {
  if (Array.isArray(v)) v = v[0];
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

/** ASCII case-insensitive equality; header names are ASCII tokens (RFC 9110 §5.1). */
function sameLetters(key: string, lower: string): boolean {
  if (key.length !== lower.length) return false;
  for (let i = 0; i < key.length; i++) {
    let c = key.charCodeAt(i);
    if (c >= 65 && c <= 90) c += 32;
    if (c !== lower.charCodeAt(i)) return false;
  }
  return true;
}
