import type { Server, ServerOptions } from 'node:http';
import type { Socket } from 'node:net';

export const CONNECTION_TIMEOUT_DEFAULTS = {
  /**
   * A request's headers must all have come this long after its first byte, or it is answered
   * 408 and its connection closed: a client that dribbles its headers (slowloris) holds a
   * connection no longer. Real clients send their headers in one write. @default 10 s
   */
  headersTimeoutMs: 10_000,
  /**
   * A connection with no request in flight — just opened, or kept alive after an answer — that
   * sends nothing for this long is closed (after an answer the `keep-alive: timeout=` header
   * says so, and keep-alive clients leave first). @default 5 s
   */
  idleTimeoutMs: 5_000,
};

export type ConnectionTimeouts = typeof CONNECTION_TIMEOUT_DEFAULTS;

/** A whole request (headers and body) must have come within this; Node's own default, and at least the headers' limit. */
const REQUEST_TIMEOUT_MS = 300_000;

/**
 * The HTTP server's own options for the timeouts: Node times headers from a request's first
 * byte (`headersTimeout`), checking every `connectionsCheckingInterval` — a quarter of the
 * limit, at most 1 s, so a dribbling client goes within 25 % (or 1 s) of it — and keeps a
 * connection alive after an answer for `keepAliveTimeout`.
 */
export function timeoutServerOptions(t: ConnectionTimeouts): ServerOptions {
  return {
    headersTimeout: t.headersTimeoutMs,
    requestTimeout: Math.max(REQUEST_TIMEOUT_MS, t.headersTimeoutMs),
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(t.headersTimeoutMs / 4))),
    keepAliveTimeout: t.idleTimeoutMs,
  };
}

/**
 * What Node leaves out: a connection that opens and never sends a request. Each accepted
 * socket is closed after `idleTimeoutMs` without a byte, until its first request's headers
 * have come; from then on Node's keep-alive timer (between requests) and headers timer (a
 * request begun) hold it. Any byte resets the wait, so a request dribbled that slowly is the
 * headers timer's.
 */
export function closeIdleConnections(server: Server, t: ConnectionTimeouts): void {
  server.keepAliveTimeout = t.idleTimeoutMs;
  const waiting = new WeakSet<Socket>();
  const idle = function (this: Socket): void {
    this.destroy();
  };
  server.on('connection', (socket: Socket) => {
    waiting.add(socket);
    socket.setTimeout(t.idleTimeoutMs);
    socket.once('timeout', idle);
  });
  server.on('request', (req) => {
    const socket = req.socket;
    if (!waiting.has(socket)) return;
    waiting.delete(socket);
    socket.off('timeout', idle);
    socket.setTimeout(0);
  });
}
