import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach } from 'vitest';
import { createFakeUpstream, type FakeUpstream } from '../../src/fake-upstream/server.js';
import { createProxy, type ProxyOptions, type StormlabProxy } from '../../src/proxy/proxy-server.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

/** A proxy on port 0 in front of `upstream`, closed after the test. */
export async function proxyTo(upstream: string, options: Partial<ProxyOptions> = {}): Promise<StormlabProxy> {
  const p = await createProxy({ upstream, port: 0, ...options });
  open.push(p);
  return p;
}

/** A second `stormlab serve` standing in for the real model: answers at once. */
export async function serveUpstream(): Promise<FakeUpstream> {
  const fu = await createFakeUpstream({
    upstream: {
      models: [
        { name: 'a', slots: 64, queue: 64, ttftMs: 0, tpotMs: 0 },
        { name: 'b', slots: 64, queue: 64, ttftMs: 0, tpotMs: 0 },
      ],
    },
    port: 0,
  });
  open.push(fu);
  return fu;
}

/** What the independent server got: the request's raw headers and body bytes. */
export interface Received {
  method: string;
  url: string;
  rawHeaders: string[];
  body: Buffer;
}

/** A scripted answer: status, raw headers and the body's pieces, each written when its gate opens. */
export interface Script {
  status: number;
  headers: string[];
  pieces: Buffer[];
}

/**
 * A minimal OpenAI-compatible server written here, independent of stormlab's: it answers each
 * request with the next script, writing one piece at a time; piece i (after the first) waits
 * for `release()`, so a test sees each piece arrive through the proxy before the next is sent.
 */
export async function independentServer() {
  const received: Received[] = [];
  const scripts: Script[] = [];
  let gate: (() => void) | undefined;
  const waiting: Array<() => void> = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      received.push({
        method: req.method ?? '',
        url: req.url ?? '',
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks),
      });
      const s = scripts.shift() ?? {
        status: 404,
        headers: ['content-type', 'application/json'],
        pieces: [Buffer.from('{"error":{"message":"no script"}}')],
      };
      res.writeHead(s.status, s.headers);
      for (let i = 0; i < s.pieces.length; i++) {
        if (i > 0)
          await new Promise<void>((resolve) => {
            gate = resolve;
            for (const w of waiting.splice(0)) w();
          });
        res.write(s.pieces[i]);
      }
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  const handle = {
    url: `http://127.0.0.1:${address.port}`,
    received,
    script: (s: Script) => scripts.push(s),
    /** Resolves once the server waits to write its next piece. */
    waiting: () => new Promise<void>((resolve) => (gate !== undefined ? resolve() : waiting.push(resolve))),
    /** Lets the server write its next piece. */
    release: () => {
      const g = gate;
      gate = undefined;
      g?.();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  open.push(handle);
  return handle;
}

/** Raw header pairs as lower-case `name: value` lines, less the hop-by-hop ones and those node adds per connection. */
export function endToEndLines(raw: readonly string[], drop: readonly string[] = []): string[] {
  const skip = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host', ...drop]);
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2)
    if (!skip.has(raw[i].toLowerCase())) out.push(`${raw[i].toLowerCase()}: ${raw[i + 1]}`);
  return out;
}

/** Resolves once `check` holds, checked after each turn of the loop (what the proxy and its upstream do happens in this process). */
export async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 10_000; i++) {
    if (check()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`never happened: ${what}`);
}
