import type { ServerResponse } from 'node:http';

/** Writes a whole JSON answer, unless the response is already gone or under way. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string | number> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  sendJsonText(res, status, JSON.stringify(body), headers);
}

/** `sendJson` of a body already serialised; `ascii`: it is known to be ASCII (written as it is, not measured). */
export function sendJsonText(
  res: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string | number> = {},
  ascii = false,
): void {
  if (res.headersSent || res.destroyed) return;
  const length = ascii ? text.length : Buffer.byteLength(text);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': length });
  res.end(text, ascii ? 'latin1' : 'utf8');
}
