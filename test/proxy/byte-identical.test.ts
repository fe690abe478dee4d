import { connect, createServer, type Socket } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { endToEndLines, proxyTo, serveUpstream } from './proxy-harness.js';

/**
 * The proxy in front of a second `stormlab serve`, with a recording tap on the wire between
 * them: what the client reads through the proxy is, byte for byte, the answer serve wrote —
 * the body (de-chunked: the proxy frames its own chunks), the status and every end-to-end header.
 */

const taps: Array<() => void> = [];
afterEach(() => {
  for (const close of taps.splice(0)) close();
});

/** A TCP relay to `port` that records what comes back: the upstream's raw HTTP answers. */
async function tap(port: number): Promise<{ url: string; bytes: () => Buffer }> {
  const got: Buffer[] = [];
  const sockets: Socket[] = [];
  const server = createServer((client) => {
    const up = connect(port, '127.0.0.1');
    sockets.push(client, up);
    client.pipe(up);
    up.on('data', (d: Buffer) => got.push(d));
    up.pipe(client);
    client.on('error', () => up.destroy());
    up.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  taps.push(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, bytes: () => Buffer.concat(got) };
}

/** One raw HTTP/1.1 answer: status, raw header pairs and its body (chunked framing undone). */
function parseAnswer(raw: Buffer): { status: number; headers: string[]; body: Buffer } {
  const end = raw.indexOf('\r\n\r\n');
  const lines = raw.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(lines[0].split(' ')[1]);
  const headers: string[] = [];
  for (const l of lines.slice(1)) {
    const colon = l.indexOf(':');
    headers.push(l.slice(0, colon), l.slice(colon + 1).trim());
  }
  const rest = raw.subarray(end + 4);
  const chunked = lines.some((l) => /^transfer-encoding:\s*chunked$/i.test(l));
  if (!chunked) return { status, headers, body: rest };
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const nl = rest.indexOf('\r\n', at);
    const size = Number.parseInt(rest.subarray(at, nl).toString('latin1'), 16);
    if (size === 0) break;
    parts.push(rest.subarray(nl + 2, nl + 2 + size));
    at = nl + 2 + size + 2;
  }
  return { status, headers, body: Buffer.concat(parts) };
}

const HEADERS = {
  'content-type': 'application/json',
  'anthropic-version': '2023-06-01',
  'x-stormlab-output-tokens': '12',
};
const CASES: Array<[string, object]> = [
  ['/v1/chat/completions', { model: 'a', max_tokens: 20, messages: [{ role: 'user', content: 'x' }] }],
  [
    '/v1/chat/completions',
    {
      model: 'a',
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 20,
      messages: [{ role: 'user', content: 'x' }],
    },
  ],
  ['/v1/messages', { model: 'a', max_tokens: 20, messages: [{ role: 'user', content: 'x' }] }],
  ['/v1/messages', { model: 'a', stream: true, max_tokens: 20, messages: [{ role: 'user', content: 'x' }] }],
  ['/v1/responses', { model: 'a', input: 'x' }],
  ['/v1/responses', { model: 'a', stream: true, input: 'x' }],
  ['/v1/embeddings', { model: 'a', input: ['x', 'y'] }],
  ['/v1/chat/completions', { model: 'nope', messages: [] }],
];

describe('stormlab proxy in front of a second stormlab serve: byte-identical without faults', () => {
  it.each(CASES)('%s %j: body, status and end-to-end headers as serve wrote them', async (path, body) => {
    const fu = await serveUpstream();
    const wire = await tap(fu.port);
    const proxy = await proxyTo(wire.url);
    const res = await request(`${proxy.url}${path}`, { method: 'POST', headers: HEADERS, body: JSON.stringify(body) });
    const got = Buffer.from(await res.body.arrayBuffer());
    const sent = parseAnswer(wire.bytes());
    expect(res.statusCode).toBe(sent.status);
    expect(got.equals(sent.body)).toBe(true);
    expect(got.length).toBeGreaterThan(0);
    const through = Object.entries(res.headers).flatMap(([k, v]) =>
      (Array.isArray(v) ? v : [v]).flatMap((x) => [k, String(x)]),
    );
    expect(endToEndLines(through).sort()).toEqual(endToEndLines(sent.headers).sort());
  });
});
