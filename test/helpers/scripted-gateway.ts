import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedGatewayOptions {
  /** The upstream's base URL (`stormlab serve`). */
  upstream: string;
  /** Tries per request, the first included. */
  attempts: number;
  /** Wait between two tries, ms: fixed, no jitter. */
  backoffMs: number;
  /** Headers not passed on to the upstream (lower case), as some gateways drop what they do not know. */
  drop?: string[];
  /** Answer 500 instead of a 200 the upstream gave (a gateway that breaks successes). */
  breakSuccesses?: boolean;
}

export interface ScriptedGateway {
  url: string;
  /** Requests from the driver, requests sent to the upstream, and those sent after their client had left. */
  counts: { received: number; forwarded: number; afterClientLeft: number };
  /** Resolves when no request is being worked on (every try of every request done). */
  idle(): Promise<void>;
  close(): Promise<void>;
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * A small gateway for tests, a real HTTP server on port 0: each request is forwarded to the
 * upstream and retried on a 5xx or 429 up to `attempts` tries with a fixed backoff — and, as
 * many gateways do, it goes on retrying after its client went away (nothing cancels the loop):
 * the traffic that reaches the upstream after the driver has stopped.
 */
export async function scriptedGateway(o: ScriptedGatewayOptions): Promise<ScriptedGateway> {
  const counts = { received: 0, forwarded: 0, afterClientLeft: 0 };
  let working = 0;
  let waiters: Array<() => void> = [];
  const done = (): void => {
    if (--working > 0) return;
    for (const w of waiters) w();
    waiters = [];
  };
  const forward = (body: Buffer, path: string, headers: Record<string, string>) =>
    new Promise<Answer>((resolve) => {
      counts.forwarded++;
      const req = httpRequest(`${o.upstream}${path}`, { method: 'POST', headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 502,
            headers: { 'content-type': String(res.headers['content-type'] ?? 'application/json') },
            body: Buffer.concat(chunks),
          }),
        );
        res.on('error', () => resolve({ status: 502, headers: {}, body: Buffer.alloc(0) }));
      });
      req.on('error', () => resolve({ status: 502, headers: {}, body: Buffer.alloc(0) }));
      req.end(body);
    });
  const server: Server = createServer((req, res) => {
    counts.received++;
    working++;
    let left = false;
    res.on('close', () => {
      if (!res.writableFinished) left = true;
    });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === 'string' && !['host', 'connection', 'content-length', ...(o.drop ?? [])].includes(k))
          headers[k] = v;
      let answer: Answer = { status: 502, headers: {}, body: Buffer.alloc(0) };
      for (let i = 0; i < o.attempts; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, o.backoffMs));
        if (left) counts.afterClientLeft++;
        answer = await forward(body, req.url ?? '/', headers);
        if (answer.status < 500 && answer.status !== 429) break;
      }
      if (!left && !res.destroyed) {
        if (o.breakSuccesses === true && answer.status === 200) {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: 'gateway error', type: 'server_error' } }));
        } else {
          res.writeHead(answer.status, answer.headers);
          res.end(answer.body);
        }
      }
      done();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    idle: () => (working === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
