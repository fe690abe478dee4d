import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';
import { createProxy } from '../src/proxy/proxy-server.js';

/**
 * One process of the proxy suite (each in its own, so each one's CPU time is its own):
 *
 *   node proxy-child.mjs upstream <slots> <serviceMs>
 *   node proxy-child.mjs proxy <upstreamUrl>
 *   node proxy-child.mjs relay <upstreamUrl>
 *   node proxy-child.mjs load rate <rps> <seconds> <rounds> <url>...
 *   node proxy-child.mjs load closed <inFlight> <seconds> <rounds> <url>...
 *   node proxy-child.mjs load stream <rounds> <url>...
 *
 * `upstream`: a minimal OpenAI-compatible server, the model server a proxy stands in front of.
 * A chat completion is answered with the same 16-token JSON after `serviceMs` (0: at once), at
 * most `slots` at a time (the rest wait their turn, first come first served): a server with a
 * capacity of `slots / serviceMs` answers a second, as a model server has. A request with
 * `"stream": true` gets one `STREAM_EVENTS`-event chat completion stream, written as fast as the
 * connection takes it. `proxy`: `stormlab proxy` (no faults) in front of the upstream. `relay`:
 * the least a Node proxy does, the peer to compare with — `node:http` in, an undici `Pool` out,
 * the body relayed chunk by chunk with backpressure, nothing read. Each prints `{"url"}` when
 * listening, then, for each `mark` line on stdin, `{"cpuUs", "served"}` (CPU time
 * used and requests answered or forwarded since start); they exit when stdin ends.
 *
 * `load`: the client, one undici `Pool` per URL, the URLs taken in turn within each round (in
 * the opposite order every other round), so a slow spell of a loaded machine costs each alike.
 * `rate`: an open loop at `rps` (requests sent on schedule whatever the answers do), each
 * request's latency from its send to its body's end. `closed`: `inFlight` loops sending the next
 * request when the last one is answered (the most the servers behind the URL answer).
 * `stream`: one stream read to its end, bytes/s. Prints one JSON line: per URL, each round's
 * figure (`rate`: every latency, ms).
 */
const STREAM_EVENTS = 20_000;
const PROMPT_TOKENS = 100;
const MAX_TOKENS = 16;
const HEADERS = { 'content-type': 'application/json' };
const WARMUP_MS = 500;

function chatBody(stream: boolean): string {
  const content = 'the storm passes when retries stay within their budget and every layer keeps its calm. '
    .repeat(8)
    .slice(0, (PROMPT_TOKENS - 4) * 3);
  return JSON.stringify({
    model: 'local-model',
    messages: [{ role: 'user', content }],
    max_tokens: MAX_TOKENS,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  });
}

let serial = 0;
function completion(model: string): string {
  return JSON.stringify({
    id: `chatcmpl-${(++serial).toString(36)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    system_fingerprint: 'fp_bench',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'the storm passes when retries stay within their budget and every layer keeps its calm while tokens',
          refusal: null,
        },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: { prompt_tokens: PROMPT_TOKENS, completion_tokens: MAX_TOKENS, total_tokens: PROMPT_TOKENS + MAX_TOKENS },
  });
}

function streamBody(): Buffer {
  const parts: string[] = [];
  const chunk = (content: string, finish: string | null) =>
    `data: ${JSON.stringify({
      id: 'chatcmpl-bench',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'local-model',
      choices: [{ index: 0, delta: { content }, finish_reason: finish, logprobs: null }],
    })}\n\n`;
  for (let i = 0; i < STREAM_EVENTS; i++) parts.push(chunk(` token${i % 97}`, null));
  parts.push(chunk('', 'stop'));
  parts.push(
    `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: PROMPT_TOKENS, completion_tokens: STREAM_EVENTS, total_tokens: PROMPT_TOKENS + STREAM_EVENTS } })}\n\n`,
    'data: [DONE]\n\n',
  );
  return Buffer.from(parts.join(''));
}

/** Prints `{url}`, then `{cpuUs, served}` for each `mark` line; exits when stdin ends. */
function report(url: string, served: () => number, close: () => void): void {
  console.log(JSON.stringify({ url }));
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (l) => {
    if (l.trim() !== 'mark') return;
    const c = process.cpuUsage();
    console.log(JSON.stringify({ cpuUs: c.user + c.system, served: served() }));
  });
  lines.on('close', close);
}

async function upstream(slots: number, serviceMs: number): Promise<void> {
  const sse = streamBody();
  let served = 0;
  let busy = 0;
  const waiting: Array<() => void> = [];
  const done = (): void => {
    const next = waiting.shift();
    if (next !== undefined) next();
    else busy--;
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string; stream?: boolean };
      if (body.stream === true) {
        served++;
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.end(sse);
        return;
      }
      const answer = (): void => {
        const text = completion(body.model);
        res.writeHead(200, {
          'x-request-id': `req_${serial}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(text),
        });
        res.end(text);
        served++;
        done();
      };
      const start = (): void => {
        if (serviceMs > 0) setTimeout(answer, serviceMs);
        else answer();
      };
      if (busy < slots) {
        busy++;
        start();
      } else waiting.push(start);
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  report(
    `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    () => served,
    () => {
      server.closeAllConnections();
      server.close(() => process.exit(0));
    },
  );
}

async function proxy(url: string): Promise<void> {
  const p = await createProxy({ upstream: url, port: 0 });
  report(
    p.url,
    () => p.stats().proxy.forwarded,
    () => void p.close().then(() => process.exit(0)),
  );
}

async function relay(url: string): Promise<void> {
  const pool = new Pool(url, { keepAliveTimeout: 30_000 });
  let served = 0;
  const server = createServer({ highWaterMark: 1 << 18 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      served++;
      const r = await pool.request({
        method: 'POST',
        path: req.url ?? '/',
        headers: { 'content-type': 'application/json' },
        body: Buffer.concat(chunks),
        highWaterMark: 1 << 18,
      });
      const headers: Record<string, string> = { 'content-type': String(r.headers['content-type']) };
      const length = r.headers['content-length'];
      if (length !== undefined) headers['content-length'] = String(length);
      res.writeHead(r.statusCode, headers);
      for await (const c of r.body) if (!res.write(c)) await new Promise((resolve) => res.once('drain', resolve));
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  report(
    `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    () => served,
    () => {
      server.closeAllConnections();
      server.close(() => process.exit(0));
    },
  );
}

const pools = new Map<string, Pool>();
const poolFor = (url: string): Pool => {
  let p = pools.get(url);
  if (p === undefined) {
    p = new Pool(url, { connections: 256, pipelining: 1, headersTimeout: 0, bodyTimeout: 0 });
    pools.set(url, p);
  }
  return p;
};

/** One request; its body read to the end. Resolves to the bytes read (throws on a status not 200). */
async function send(url: string, body: string): Promise<number> {
  const res = await poolFor(url).request({ path: '/v1/chat/completions', method: 'POST', headers: HEADERS, body });
  let n = 0;
  for await (const chunk of res.body) n += (chunk as Buffer).length;
  if (res.statusCode !== 200) throw new Error(`status ${res.statusCode} from ${url}`);
  return n;
}

/** `rps` requests a second for `ms`, on schedule; every latency (ms) when the last answer is in. */
function openLoop(url: string, rps: number, ms: number): Promise<number[]> {
  const body = chatBody(false);
  const total = Math.round((rps * ms) / 1000);
  const interval = 1000 / rps;
  const latencies: number[] = [];
  let sent = 0;
  let answered = 0;
  return new Promise((resolve, reject) => {
    let next = performance.now();
    const fire = (): void => {
      sent++;
      const t0 = performance.now();
      send(url, body).then(() => {
        latencies.push(performance.now() - t0);
        if (++answered === total) resolve(latencies);
      }, reject);
    };
    const tick = (): void => {
      const now = performance.now();
      while (next <= now && sent < total) {
        fire();
        next += interval;
      }
      if (sent < total) setTimeout(tick, Math.max(0, next - performance.now()));
    };
    tick();
  });
}

/** `inFlight` loops for `ms`: requests/s answered. */
async function closedLoop(url: string, inFlight: number, ms: number): Promise<number> {
  const body = chatBody(false);
  const until = performance.now() + ms;
  let answered = 0;
  const loop = async (): Promise<void> => {
    while (performance.now() < until) {
      await send(url, body);
      if (performance.now() <= until) answered++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, loop));
  return answered / (ms / 1000);
}

/** One stream read to its end: bytes/s, and the bytes. */
async function oneStream(url: string): Promise<{ rate: number; bytes: number }> {
  const t0 = performance.now();
  const bytes = await send(url, chatBody(true));
  return { rate: bytes / ((performance.now() - t0) / 1000), bytes };
}

/** Each URL's figure for each round, the URLs taken in turn (reversed every other round). */
async function rounds<T>(urls: string[], n: number, one: (url: string) => Promise<T>): Promise<T[][]> {
  const out = urls.map(() => [] as T[]);
  for (let r = 0; r < n; r++) {
    const order = urls.map((_, i) => i);
    if (r % 2 === 1) order.reverse();
    for (const i of order) out[i].push(await one(urls[i]));
  }
  return out;
}

async function load(mode: string, args: string[]): Promise<void> {
  let result: unknown;
  if (mode === 'rate') {
    const [rps, seconds, n, ...urls] = args;
    for (const u of urls) await openLoop(u, Number(rps), WARMUP_MS);
    result = await rounds(urls, Number(n), (u) => openLoop(u, Number(rps), Number(seconds) * 1000));
  } else if (mode === 'closed') {
    const [inFlight, seconds, n, ...urls] = args;
    for (const u of urls) await closedLoop(u, Number(inFlight), WARMUP_MS);
    result = await rounds(urls, Number(n), (u) => closedLoop(u, Number(inFlight), Number(seconds) * 1000));
  } else if (mode === 'stream') {
    const [n, ...urls] = args;
    const runs = await rounds(urls, Number(n), oneStream);
    const bytes = new Set(runs.flat().map((r) => r.bytes));
    if (bytes.size !== 1) throw new Error(`proxy bench: the streams differ in length: ${[...bytes].join(', ')} bytes`);
    result = { bytes: [...bytes][0], rates: runs.map((rs) => rs.map((r) => r.rate)) };
  } else throw new Error(`proxy-child: unknown load mode ${mode}`);
  await Promise.all([...pools.values()].map((p) => p.close()));
  console.log(JSON.stringify(result));
}

const [role, ...rest] = process.argv.slice(2);
if (role === 'upstream') await upstream(Number(rest[0]), Number(rest[1]));
else if (role === 'proxy') await proxy(rest[0]);
else if (role === 'relay') await relay(rest[0]);
else if (role === 'load') await load(rest[0], rest.slice(1));
else throw new Error(`proxy-child: unknown role ${role} (upstream, proxy, relay, load)`);
