import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { guardedFetch } from '../src/integrations/guarded-fetch.js';
import { median, printTable, type Row } from './measure.js';

/**
 * The stream guard's cost: bytes/s of one OpenAI chat completion stream read to the end
 * through `guardedFetch` with the stream guard, against the same body passed through
 * (`stream: false`: the tap that only reads usage) and read with no guard at all. Twice: from
 * memory (the guard's parsing is all there is to pay for) and from a server on 127.0.0.1 (what
 * a gateway sees). Each way reads the same body in the same chunks. The goal is the guard at
 * ≥ 90 % of pass-through.
 */
const EVENTS = 20_000;
const ROUNDS = 7;

/**
 * The stream's body. `spaced`: its JSON written as Python's `json.dumps` writes it by default (a
 * space after every colon and comma), which the guard reads as exactly as compact JSON.
 */
function sseBody(spaced = false): Buffer {
  const parts: string[] = [];
  const json = (v: unknown): string => {
    const compact = JSON.stringify(v);
    return spaced
      ? JSON.stringify(v, null, 1)
          .replace(/\n\s*/g, ' ')
          .replace(/([[{]) /g, '$1')
          .replace(/ ([\]}])/g, '$1')
      : compact;
  };
  const chunk = (content: string, finish: string | null) =>
    `data: ${json({
      id: 'chatcmpl-bench',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, delta: { content }, finish_reason: finish, logprobs: null }],
    })}\n\n`;
  for (let i = 0; i < EVENTS; i++) parts.push(chunk(` token${i % 97}`, null));
  parts.push(chunk('', 'stop'), 'data: [DONE]\n\n');
  return Buffer.from(parts.join(''));
}

/** The body cut as a socket would hand it over: 16 KiB reads, event boundaries anywhere. */
function chunks(body: Buffer, size = 16 * 1024): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at < body.length; at += size) out.push(new Uint8Array(body.subarray(at, at + size)));
  return out;
}

function memoryFetch(parts: Uint8Array[]): typeof fetch {
  return async () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(c) {
          for (const p of parts) c.enqueue(p);
          c.close();
        },
      }),
      { status: 200, headers: { 'content-type': 'text/event-stream' } },
    );
}

async function drain(res: Response): Promise<number> {
  let n = 0;
  const reader = res.body!.getReader();
  for (;;) {
    const r = await reader.read();
    if (r.done) return n;
    n += r.value.length;
  }
}

type Send = () => Promise<Response>;

/**
 * Bytes/s of each way of reading the stream, median of `ROUNDS`, the ways taken in turn within
 * each round: on a loaded machine a slow spell then costs them all alike, not whichever ran in it.
 */
async function bytesPerSecond(sends: Send[], expected: number): Promise<number[]> {
  for (const send of sends) for (let i = 0; i < 2; i++) await drain(await send()); // warm-up
  const samples: number[][] = sends.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < sends.length; k++) {
      const t0 = process.hrtime.bigint();
      const n = await drain(await sends[k]());
      const s = Number(process.hrtime.bigint() - t0) / 1e9;
      if (n !== expected) throw new Error(`stream bench: read ${n} bytes, expected ${expected}`);
      samples[k].push(n / s);
    }
  }
  return samples.map(median);
}

function serve(body: Buffer): Promise<Server> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(body);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

export async function streamSuite(): Promise<Row[]> {
  const request = { method: 'POST', body: JSON.stringify({ model: 'gpt-4o-mini', messages: [], stream: true }) };
  const rows: Row[] = [];
  const table: Array<Record<string, string | number>> = [];
  const compact = sseBody();
  const spaced = sseBody(true);
  const servers = await Promise.all([serve(compact), serve(spaced)]);
  const originOf = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  const loopback = (input: string | URL | Request, init?: RequestInit) => fetch(input, init);
  try {
    for (const [where, body, base, origin] of [
      ['memory', compact, memoryFetch(chunks(compact)), originOf(servers[0])],
      ['127.0.0.1', compact, loopback, originOf(servers[0])],
      ['127.0.0.1, spaced JSON', spaced, loopback, originOf(servers[1])],
    ] as const) {
      const url = `${origin}/v1/chat/completions`;
      const plain: Send = () => base(url, request);
      const pass = guardedFetch({ fetch: base, stream: false });
      const guard = guardedFetch({ fetch: base });
      const [raw, through, guarded] = await bytesPerSecond(
        [plain, () => pass(url, request), () => guard(url, request)],
        body.length,
      );
      const share = (100 * guarded) / through;
      table.push({
        from: where,
        'no guard MB/s': raw / 1e6,
        'pass-through MB/s': through / 1e6,
        'stream guard MB/s': guarded / 1e6,
        'guard / pass-through %': share,
      });
      rows.push(
        { suite: 'stream', name: `${where}: no guard`, value: raw, unit: 'bytes/s' },
        { suite: 'stream', name: `${where}: pass-through (stream: false)`, value: through, unit: 'bytes/s' },
        { suite: 'stream', name: `${where}: stream guard`, value: guarded, unit: 'bytes/s' },
        { suite: 'stream', name: `${where}: stream guard / pass-through`, value: share, unit: '%' },
      );
    }
  } finally {
    for (const s of servers) s.close();
  }
  printTable(
    `stream guard: one ${(compact.length / 1e6).toFixed(1)} MB chat completion stream (${EVENTS} events; spaced: ${(spaced.length / 1e6).toFixed(1)} MB)`,
    table,
  );
  return rows;
}
