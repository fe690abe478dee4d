import { gzipSync } from 'node:zlib';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { readStreamEvent } from '../../src/integrations/stream-event.js';
import { SseSplitter, sseFields } from '../../src/integrations/sse-splitter.js';
import { endToEndLines, independentServer, proxyTo, serveUpstream } from './proxy-harness.js';

const JSON_BODY = Buffer.from(
  '{"id":"x-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ünïcode ✓"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}',
);
const REQUEST = '{"model":"local-llama","messages":[{"role":"user","content":"hi"}],  "max_tokens": 9}';

describe('stormlab proxy passes answers through as they came', () => {
  it('in front of an independent server: status, headers less hop-by-hop, body and request bytes unchanged', async () => {
    const up = await independentServer();
    up.script({
      status: 201,
      headers: [
        'Content-Type',
        'application/json',
        'X-Custom',
        'a, b',
        'Set-Cookie',
        'a=1',
        'Set-Cookie',
        'b=2',
        'Content-Length',
        String(JSON_BODY.length),
        'Keep-Alive',
        'timeout=9',
      ],
      pieces: [JSON_BODY],
    });
    const proxy = await proxyTo(up.url);
    const res = await request(`${proxy.url}/v1/chat/completions?api-version=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer k', 'X-Mixed-Case': 'v' },
      body: REQUEST,
    });
    const body = Buffer.from(await res.body.arrayBuffer());
    expect(res.statusCode).toBe(201);
    expect(body.equals(JSON_BODY)).toBe(true);
    const sent = endToEndLines([
      'Content-Type',
      'application/json',
      'X-Custom',
      'a, b',
      'Set-Cookie',
      'a=1',
      'Set-Cookie',
      'b=2',
      'Content-Length',
      String(JSON_BODY.length),
    ]);
    const got = Object.entries(res.headers).flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((x) => `${k}: ${x}`));
    for (const line of sent) expect(got).toContain(line);
    expect(got.some((l) => l.startsWith('keep-alive: timeout=9'))).toBe(false);
    // The request went on as it came: the same bytes, path and query, headers less hop-by-hop.
    const r = up.received[0];
    expect(r.url).toBe('/v1/chat/completions?api-version=1');
    expect(r.body.toString()).toBe(REQUEST);
    const lines = endToEndLines(r.rawHeaders);
    expect(lines).toContain('authorization: Bearer k');
    expect(lines).toContain('x-mixed-case: v');
    expect(proxy.stats().routes).toEqual([
      { route: '/v1/chat/completions', requests: 1, inFlight: 0, status: { '201': 1 }, noLengthHeader: 1 },
    ]);
    expect(proxy.stats().models[0]).toMatchObject({ name: 'local-llama', attempts: 1, tokensServed: 7 });
  });

  it('drops hop-by-hop headers and those the connection header names, both ways', async () => {
    const { endToEnd } = await import('../../src/proxy/hop-headers.js');
    expect(
      endToEnd(
        [
          'Connection',
          'X-Secret, keep-alive',
          'X-Secret',
          's',
          'Keep-Alive',
          't=1',
          'TE',
          'trailers',
          'Upgrade',
          'h2c',
          'Transfer-Encoding',
          'chunked',
          'X-Kept',
          'k',
          'Host',
          'h',
        ],
        new Set(['host']),
      ),
    ).toEqual(['X-Kept', 'k']);
  });

  it('streams each event as it arrives, byte for byte', async () => {
    const up = await independentServer();
    const events = [
      'data: {"id":"c","choices":[{"index":0,"delta":{"content":"one"}}]}\n\n',
      ': keep-alive comment\r\n\r\ndata: {"id":"c","choices":[{"index":0,\ndata: "delta":{"content":"two"}}]}\n\n',
      'data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
    ];
    up.script({
      status: 200,
      headers: ['content-type', 'text/event-stream'],
      pieces: events.map((e) => Buffer.from(e)),
    });
    const proxy = await proxyTo(up.url);
    const res = await request(`${proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"model":"m","stream":true,"messages":[]}',
    });
    const got: Buffer[] = [];
    const reader = res.body[Symbol.asyncIterator]();
    // The first event arrives while the upstream still holds the second.
    await up.waiting();
    got.push(Buffer.from((await reader.next()).value as Buffer));
    expect(Buffer.concat(got).toString()).toBe(events[0]);
    up.release();
    for (;;) {
      await up.waiting().then(() => up.release());
      const n = await reader.next();
      if (n.done) break;
      got.push(Buffer.from(n.value as Buffer));
      if (Buffer.concat(got).length === Buffer.byteLength(events.join(''))) break;
    }
    expect(Buffer.concat(got).toString()).toBe(events.join(''));
  });

  it('forwards what it does not read untouched and counts it', async () => {
    const up = await independentServer();
    up.script({ status: 200, headers: ['content-type', 'application/json'], pieces: [Buffer.from('{"data":[]}')] });
    up.script({ status: 418, headers: ['content-type', 'text/plain'], pieces: [Buffer.from('teapot')] });
    const proxy = await proxyTo(`${up.url}/base`);
    const models = await request(`${proxy.url}/v1/models`);
    expect(await models.body.text()).toBe('{"data":[]}');
    const other = await request(`${proxy.url}/api/generate`, { method: 'POST', body: 'not json at all' });
    expect(other.statusCode).toBe(418);
    expect(await other.body.text()).toBe('teapot');
    expect(up.received.map((r) => [r.method, r.url, r.body.toString()])).toEqual([
      ['GET', '/base/v1/models', ''],
      ['POST', '/base/api/generate', 'not json at all'],
    ]);
    expect(proxy.stats().proxy).toMatchObject({ forwarded: 2, unknown: 2 });
  });

  it('in front of a second stormlab serve: the same events as the upstream sent, every route', async () => {
    const fu = await serveUpstream();
    const proxy = await proxyTo(fu.url);
    const ask = async (base: string, path: string, body: object) => {
      const res = await request(`${base}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'anthropic-version': '2023-06-01',
          'x-stormlab-output-tokens': '6',
        },
        body: JSON.stringify(body),
      });
      return { status: res.statusCode, type: res.headers['content-type'], text: await res.body.text() };
    };
    const bodies: Array<[string, object]> = [
      [
        '/v1/chat/completions',
        { model: 'a', stream: true, max_tokens: 20, messages: [{ role: 'user', content: 'x' }] },
      ],
      ['/v1/chat/completions', { model: 'a', max_tokens: 20, messages: [{ role: 'user', content: 'x' }] }],
      ['/v1/messages', { model: 'a', stream: true, max_tokens: 20, messages: [{ role: 'user', content: 'x' }] }],
      ['/v1/responses', { model: 'a', stream: true, input: 'x' }],
      ['/v1/embeddings', { model: 'a', input: ['x', 'y'] }],
    ];
    for (const [path, body] of bodies) {
      const direct = await ask(fu.url, path, body);
      const through = await ask(proxy.url, path, body);
      expect(through.status).toBe(direct.status);
      expect(through.type).toBe(direct.type);
      // Ids and times differ per answer: the events compare by structure, less those.
      expect(masked(through.text)).toEqual(masked(direct.text));
    }
    expect(fu.stats().routes.reduce((n, r) => n + r.requests, 0)).toBe(2 * bodies.length);
  });

  it('passes the Responses state routes through: continuation, GET, input_items and DELETE by id, the same bytes as direct', async () => {
    const fu = await serveUpstream();
    const proxy = await proxyTo(fu.url);
    const post = async (body: object) => {
      const res = await request(`${proxy.url}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'a', ...body }),
      });
      return { status: res.statusCode, body: (await res.body.json()) as Record<string, any> };
    };
    const tools = [{ type: 'function', name: 'f', parameters: { type: 'object', properties: {} } }];
    const first = await post({ input: 'go', tools });
    const call = first.body.output[0];
    expect(call.type).toBe('function_call');
    const second = await post({
      tools,
      previous_response_id: first.body.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'ok' }],
    });
    expect(second.body).toMatchObject({ status: 'completed', previous_response_id: first.body.id });
    const bytes = async (base: string, path: string, method = 'GET') => {
      const res = await request(`${base}${path}`, { method });
      return { status: res.statusCode, type: res.headers['content-type'], body: await res.body.text() };
    };
    for (const path of [
      `/v1/responses/${second.body.id}`,
      `/v1/responses/${second.body.id}/input_items?order=asc&limit=2`,
      `/v1/responses/${second.body.id}/input_items?limit=0`,
      '/v1/responses/resp_nope/input_items',
    ]) {
      const through = await bytes(proxy.url, path);
      expect(through, path).toEqual(await bytes(fu.url, path));
    }
    const items = JSON.parse((await bytes(proxy.url, `/v1/responses/${second.body.id}/input_items`)).body);
    expect(items.data.map((i: { type: string }) => i.type)).toEqual([
      'function_call_output',
      'function_call',
      'message',
    ]);
    expect((await bytes(proxy.url, `/v1/responses/${first.body.id}`, 'DELETE')).status).toBe(200);
    expect((await post({ previous_response_id: first.body.id, input: 'again' })).status).toBe(400);
    // Counted as forwarded untouched, and named by route, not by id.
    expect(proxy.stats().proxy).toMatchObject({ unknown: 6 });
    expect(new Set(proxy.stats().routes.map((r) => r.route))).toEqual(new Set(['/v1/responses']));
    expect(new Set(proxy.requests().map((r) => r.route))).toEqual(
      new Set(['/v1/responses', '/v1/responses/{id}', '/v1/responses/{id}/input_items']),
    );
  });

  it('asks for identity only where a fault or a TPM limit must read the answer; decodes one compressed anyway', async () => {
    const events =
      'data: {"choices":[{"index":0,"delta":{"content":"one"}}]}\n\n' +
      'data: {"choices":[{"index":0,"delta":{"content":"two"}}]}\n\n' +
      'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n';
    const gzipped = gzipSync(events);
    const up = await independentServer();
    const sse = (encoding: string, body: Buffer) =>
      up.script({
        status: 200,
        headers: ['content-type', 'text/event-stream', 'content-encoding', encoding, 'x-kept', 'yes'],
        pieces: [body],
      });
    const ask = async (proxyUrl: string) => {
      const res = await request(`${proxyUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'accept-encoding': 'gzip, br' },
        body: '{"model":"m","stream":true,"messages":[]}',
      });
      return { headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
    };
    const acceptSent = () =>
      endToEndLines(up.received[up.received.length - 1].rawHeaders).filter((l) => l.startsWith('accept-encoding'));
    // No fault: the client's accept-encoding goes on, the compressed answer comes back as it was.
    const plain = await proxyTo(up.url);
    sse('gzip', gzipped);
    const a = await ask(plain.url);
    expect(acceptSent()).toEqual(['accept-encoding: gzip, br']);
    expect(a.headers['content-encoding']).toBe('gzip');
    expect(a.body.equals(gzipped)).toBe(true);
    // A cut after one token: identity asked for; an upstream that compresses anyway is decoded and cut.
    const cut = await proxyTo(up.url, { faults: [{ kind: 'cut', afterTokens: 1 }] });
    sse('gzip', gzipped);
    const b = await ask(cut.url);
    expect(acceptSent()).toEqual(['accept-encoding: identity']);
    expect(b.headers['content-encoding']).toBeUndefined();
    expect(b.headers['x-kept']).toBe('yes');
    expect(b.body.toString()).toBe('data: {"choices":[{"index":0,"delta":{"content":"one"}}]}\n\n');
    expect(cut.requests()[0].fault).toBe('Cut');
    // An encoding the proxy cannot decode: relayed as it came, and counted as not shaped.
    sse('zstd', Buffer.from('not really zstd'));
    const c = await ask(cut.url);
    expect(c.body.toString()).toBe('not really zstd');
    expect(cut.stats().proxy.unshaped).toBe(1);
    const metrics = await (await request(`${cut.url}/metrics`)).body.text();
    expect(metrics).toContain('# TYPE stormlab_proxy_unshaped_total counter\nstormlab_proxy_unshaped_total 1\n');
    expect(metrics).toContain('\nstormlab_proxy_forwarded_total 2\n');
    // A body that says gzip and is not: the answer breaks off, counted as the upstream's error.
    sse('gzip', Buffer.from('not gzip at all'));
    const broken = request(`${cut.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"model":"m","stream":true,"messages":[]}',
    }).then((r) => r.body.text());
    await expect(broken).rejects.toThrow();
    expect(cut.stats().proxy.upstreamErrors).toBe(1);
    // A TPM limit reads the usage too: identity asked for.
    const limited = await proxyTo(up.url, { quotas: { tpm: 100_000 } });
    sse('gzip', gzipped);
    await ask(limited.url);
    expect(acceptSent()).toEqual(['accept-encoding: identity']);
  });

  it("counts a stream's tokens from its usage events (OpenAI, Anthropic, Responses): TPM set right at the end", async () => {
    const fu = await serveUpstream();
    const proxy = await proxyTo(fu.url, { quotas: { tpm: 100_000 } });
    const streamed = async (path: string, body: object) => {
      const res = await request(`${proxy.url}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'anthropic-version': '2023-06-01',
          'x-stormlab-output-tokens': '7',
        },
        body: JSON.stringify({ model: 'a', stream: true, ...body }),
      });
      return res.body.text();
    };
    const usages: number[] = [];
    const openai = await streamed('/v1/chat/completions', {
      stream_options: { include_usage: true },
      max_tokens: 20,
      messages: [{ role: 'user', content: 'x' }],
    });
    usages.push((masked(openai).at(-2) as [string, number, Record<string, any>])[2].usage.total_tokens);
    const anthropic = await streamed('/v1/messages', { max_tokens: 20, messages: [{ role: 'user', content: 'x' }] });
    const events = masked(anthropic) as Array<[string, number, Record<string, any>]>;
    const start = events.find((e) => e[0] === 'message_start')![2].message.usage;
    const delta = events.find((e) => e[0] === 'message_delta')![2].usage;
    usages.push(start.input_tokens + delta.output_tokens);
    const responses = await streamed('/v1/responses', { input: 'x' });
    usages.push((masked(responses).at(-1) as [string, number, Record<string, any>])[2].response.usage.total_tokens);
    expect(usages.every((n) => n > 7)).toBe(true);
    const total = usages.reduce((a, b) => a + b, 0);
    expect(proxy.stats().models[0].tokensServed).toBe(total);
    expect(proxy.stats().models[0].quotas.tokens?.remaining).toBe(100_000 - total);
  });
});

/** An answer's events (or its JSON) with ids and times taken out. */
function masked(text: string): unknown[] {
  const out: unknown[] = [];
  const strip = (v: unknown): unknown =>
    JSON.parse(JSON.stringify(v), (k, x) =>
      ['id', 'created', 'created_at', 'item_id', 'call_id', 'response_id'].includes(k) ? '*' : x,
    );
  if (!text.startsWith('data:') && !text.startsWith('event:')) return [strip(JSON.parse(text))];
  const s = new SseSplitter();
  s.push(Buffer.from(text), (b, t, start, end) => {
    const e = sseFields(b, t, start, end);
    const info = readStreamEvent(e);
    out.push([e.event, info.flags, info.json === undefined ? e.data : strip(info.json)]);
  });
  return out;
}
