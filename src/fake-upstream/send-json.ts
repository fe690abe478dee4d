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

/** `sendJson` of a body already serialised. */
export function sendJsonText(
  res: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string | number> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
