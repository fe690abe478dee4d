/** Headers that describe one connection, not the message (RFC 9110 §7.6.1): never forwarded. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * A raw header list (`[name, value, name, value, …]`, as node and undici give them) less the
 * hop-by-hop headers, those the `connection` header names, and `drop` (lower-case names).
 * Names keep their case and the list its order.
 */
export function endToEnd(raw: readonly string[], drop?: ReadonlySet<string>): string[] {
  let named: Set<string> | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === 10 && raw[i].toLowerCase() === 'connection') {
      named ??= new Set();
      for (const t of raw[i + 1].split(',')) named.add(t.trim().toLowerCase());
    }
  }
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (HOP_BY_HOP.has(name) || named?.has(name) || drop?.has(name)) continue;
    out.push(raw[i], raw[i + 1]);
  }
  return out;
}
