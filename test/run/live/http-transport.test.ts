import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeUpstream } from '../../../src/fake-upstream/server.js';
import { detailOf, HttpTransport } from '../../../src/run/live/http-transport.js';
import { StreamScan, usageTokens } from '../../../src/run/live/wire-format.js';
import { Detail, RequestFlag, StreamEvent } from '../../../src/upstream/response.js';

interface Answer {
  reqId: number;
  status: number;
  detail: number;
  tokens: number;
  retryAfterMs: number;
}

interface Seen {
  url: string;
  headers: IncomingMessage['headers'];
  body: { model: string; messages: Array<{ role: string; content: string }>; max_tokens: number };
}

type Reply = (res: ServerResponse, seen: Seen) => void;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

/** A server on port 0 answering each request with `reply`; `seen` records what came. */
async function server(reply: Reply): Promise<{ url: string; seen: Seen[]; held: ServerResponse[] }> {
  const seen: Seen[] = [];
  const held: ServerResponse[] = [];
  const s: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const entry = { url: req.url ?? '', headers: req.headers, body: JSON.parse(text) as Seen['body'] };
      seen.push(entry);
      held.push(res);
      reply(res, entry);
    });
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        s.closeAllConnections();
        s.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, seen, held };
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Reply =>
  (res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

/** A transport on `url` whose answers resolve `next()` one by one. */
function transport(url: string, options: ConstructorParameters<typeof HttpTransport>[3] = {}) {
  const answers: Answer[] = [];
  let wake: (() => void) | undefined;
  const t = new HttpTransport(
    ['primary', 'secondary'],
    {
      onResponse(reqId, status, detail, tokens, retryAfterMs) {
        answers.push({ reqId, status, detail, tokens, retryAfterMs });
        wake?.();
      },
    },
    () => 0,
    options,
  );
  t.open(url);
  closers.push(() => t.close());
  const next = async (n = 1): Promise<Answer[]> => {
    while (answers.length < n) await new Promise<void>((resolve) => (wake = resolve));
    return answers.splice(0, n);
  };
  return { t, answers, next };
}

describe('HttpTransport', () => {
  it('sends an OpenAI chat completion with a prompt of the size asked, and reads the usage of a 200 — never synchronously', async () => {
    const srv = await server(json(200, { usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 } }));
    const { t, answers, next } = transport(srv.url, { headers: { Authorization: 'Bearer k', 'X-Tenant': 'a' } });
    t.submit(7, 1, 100, 50, 0);
    expect(answers).toEqual([]);
    expect(await next()).toEqual([{ reqId: 7, status: 200, detail: Detail.None, tokens: 150, retryAfterMs: -1 }]);
    const [req] = srv.seen;
    expect(req.url).toBe('/v1/chat/completions');
    expect(req.headers.authorization).toBe('Bearer k');
    expect(req.headers['x-tenant']).toBe('a');
    // The fake upstream answers it max_tokens long, as the simulator serves it (no natural length).
    expect(req.headers['x-stormlab-output-tokens']).toBe('max');
    expect(req.body.model).toBe('secondary');
    expect(req.body.max_tokens).toBe(50);
    // ceil(chars / 3) + 4 tokens per message, as the fake upstream (and the engine's estimator) count.
    expect(req.body.messages).toHaveLength(1);
    expect(Math.ceil(req.body.messages[0].content.length / 3) + 4).toBe(100);
    expect(t.modelIndex('secondary')).toBe(1);
    expect(t.modelIndex('nope')).toBe(-1);
  });

  it('counts requests that wait for a connection (pool starvation), and a cancelled one that waited is never sent', async () => {
    const srv = await server(() => {}); // holds every request until the test answers it
    const { t, next } = transport(srv.url, { connections: 2 });
    for (let id = 0; id < 5; id++) t.submit(id, 0, 10, 1, 0);
    while (srv.held.length < 2) await new Promise((r) => setImmediate(r));
    expect(t.samplePool()).toBe(3);
    t.cancel(2, 0);
    json(200, { usage: { total_tokens: 3 } })(srv.held[0], srv.seen[0]);
    expect((await next()).map((a) => a.reqId)).toEqual([0]);
    while (srv.held.length < 3) await new Promise((r) => setImmediate(r));
    expect(t.samplePool()).toBe(1);
    expect(t.figures()).toMatchObject({ poolConnections: 2, maxPending: 3 });
    expect(t.active).toBe(3); // 1 and 3 out, 4 waiting; 2 was cancelled
  });

  it('keeps a path prefix, and does not double a trailing /v1', async () => {
    const srv = await server(json(200, { usage: { total_tokens: 1 } }));
    const a = transport(`${srv.url}/gateway/`);
    a.t.submit(0, 0, 10, 1, 0);
    await a.next();
    const b = transport(`${srv.url}/openai/v1`);
    b.t.submit(0, 0, 10, 1, 0);
    await b.next();
    expect(srv.seen.map((s) => s.url)).toEqual(['/gateway/v1/chat/completions', '/openai/v1/chat/completions']);
  });

  it.each([
    [
      '429 RPM with retry-after-ms',
      429,
      { error: { type: 'requests', code: 'rate_limit_exceeded' } },
      { 'retry-after-ms': '250', 'retry-after': '1' },
      Detail.RateLimitRequests,
      250,
    ],
    [
      '429 TPM with retry-after seconds',
      429,
      { error: { type: 'tokens', code: 'rate_limit_exceeded' } },
      { 'retry-after': '2' },
      Detail.RateLimitTokens,
      2000,
    ],
    [
      '429 insufficient_quota',
      429,
      { error: { type: 'insufficient_quota', code: 'insufficient_quota' } },
      {},
      Detail.InsufficientQuota,
      -1,
    ],
    ['529 overloaded', 529, { error: { type: 'overloaded_error' } }, {}, Detail.Overloaded, -1],
    ['503', 503, { error: { type: 'server_error' } }, {}, Detail.Overloaded, -1],
    ['500', 500, { error: { type: 'server_error' } }, {}, Detail.None, -1],
    ['400 context length', 400, { error: { code: 'context_length_exceeded' } }, {}, Detail.ContextLength, -1],
    ['a body that is not JSON', 502, 'Bad Gateway', {}, Detail.None, -1],
  ])('%s', async (_name, status, body, headers, detail, retryAfterMs) => {
    const srv = await server((res) => {
      res.writeHead(status, headers);
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    });
    const { t, next } = transport(srv.url);
    t.submit(3, 0, 10, 5, 0);
    expect(await next()).toEqual([{ reqId: 3, status, detail, tokens: 0, retryAfterMs }]);
  });

  it('a connection reset and a refused connection are status 0, counted as request errors', async () => {
    const srv = await server((res) => res.socket?.resetAndDestroy());
    const { t, next } = transport(srv.url);
    t.submit(1, 0, 10, 5, 0);
    expect(await next()).toEqual([{ reqId: 1, status: 0, detail: Detail.Reset, tokens: 0, retryAfterMs: -1 }]);
    const refused = transport('http://127.0.0.1:1');
    refused.t.submit(2, 0, 10, 5, 0);
    expect((await refused.next())[0]).toMatchObject({ reqId: 2, status: 0, detail: Detail.Reset });
    expect(refused.t.figures().requestErrors).toBe(1);
    expect([...refused.t.errorCodes.keys()]).toEqual(['ECONNREFUSED']);
    expect(t.figures().requestErrors).toBe(1);
  });

  it('a 200 whose body breaks off is a mid-stream failure', async () => {
    const srv = await server((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"usage":', () => res.destroy());
    });
    const { t, next } = transport(srv.url);
    t.submit(4, 0, 10, 5, 0);
    expect((await next())[0]).toMatchObject({ reqId: 4, status: 200, detail: Detail.MidStream });
  });

  it('a cancelled request is aborted and never answered; its id can be reused at once', async () => {
    let first = true;
    const srv = await server((res) => {
      if (first)
        first = false; // hold the first one: it is cancelled
      else json(200, { usage: { total_tokens: 9 } })(res, srv.seen[0]);
    });
    const { t, next, answers } = transport(srv.url);
    t.submit(5, 0, 10, 5, 0);
    while (srv.seen.length < 1) await new Promise((r) => setImmediate(r));
    const closed = new Promise((resolve) => srv.held[0].on('close', resolve));
    t.cancel(5, 0);
    expect(t.active).toBe(0);
    await closed; // the server sees the client leave
    t.submit(5, 0, 10, 5, 0);
    expect(await next()).toEqual([{ reqId: 5, status: 200, detail: Detail.None, tokens: 9, retryAfterMs: -1 }]);
    expect(answers).toEqual([]);
    expect(t.upstreamStats().models[0]).toMatchObject({ attempts: 2, cancelled: 1, busy: 0, byStatus: { 200: 1 } });
    expect(t.figures().requestErrors).toBe(0);
  });

  it('measures requests waiting for a connection when the pool is too small', async () => {
    const srv = await server(() => {}); // hold every request
    const { t } = transport(srv.url, { connections: 2 });
    for (let i = 0; i < 10; i++) t.submit(i, 0, 10, 5, 0);
    while (srv.seen.length < 2) await new Promise((r) => setImmediate(r));
    expect(t.samplePool()).toBe(8);
    expect(t.samplePool()).toBe(8);
    t.abortAll();
    expect(t.active).toBe(0);
    expect(t.figures()).toEqual({ poolConnections: 2, maxPending: 8, meanPending: 8, requestErrors: 0 });
  });

  it('rejects a pool of no connections, and a submit before open', () => {
    const l = { onResponse() {} };
    expect(() => new HttpTransport(['m'], l, () => 0, { connections: 0 })).toThrow(/connections/);
    expect(() => new HttpTransport(['m'], l, () => 0).submit(0, 0, 1, 1, 0)).toThrow(/open/);
  });
});

describe('HttpTransport: APIs and streams', () => {
  it('writes Anthropic messages: /v1/messages, anthropic-version, max_tokens; tokens are input + output', async () => {
    const srv = await server(
      json(200, { type: 'message', content: [], usage: { input_tokens: 40, output_tokens: 12 } }),
    );
    const { t, next } = transport(srv.url, { api: 'anthropic', headers: { 'x-api-key': 'k' } });
    t.submit(1, 0, 40, 12, 0);
    expect(await next()).toEqual([{ reqId: 1, status: 200, detail: Detail.None, tokens: 52, retryAfterMs: -1 }]);
    const [req] = srv.seen;
    expect(req.url).toBe('/v1/messages');
    expect(req.headers['anthropic-version']).toBe('2023-06-01');
    expect(req.headers['x-api-key']).toBe('k');
    expect(req.body).toMatchObject({ model: 'primary', max_tokens: 12 });
    expect((req.body as unknown as { stream?: boolean }).stream).toBeUndefined();
  });

  it.each(['openai', 'anthropic'] as const)(
    '%s streamed against the fake upstream: the same tokens as the JSON answer, read from the stream',
    async (api) => {
      const fake = await createFakeUpstream({
        upstream: { models: [{ name: 'primary', slots: 8, queue: 8, ttftMs: 1, tpotMs: 0 }] },
        port: 0,
      });
      closers.push(() => fake.close());
      const plain = transport(fake.url, { api });
      plain.t.submit(1, 0, 60, 20, 0);
      const [json] = await plain.next();
      const streamed = transport(fake.url, { api, stream: true });
      streamed.t.submit(2, 0, 60, 20, 0);
      const [sse] = await streamed.next();
      expect(json).toMatchObject({ status: 200, detail: Detail.None });
      expect(json.tokens).toBe(80);
      expect(sse).toEqual({ ...json, reqId: 2 });
    },
  );

  it('a stream with an error event, or without its end marker, is a mid-stream failure', async () => {
    const srv = await server((res, seen) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"choices":[{"delta":{"content":"hi"}}]}\n\n');
      if (seen.body.max_tokens === 1) res.end('data: {"error":{"message":"overloaded","type":"server_error"}}\n\n');
      else res.end(); // no [DONE]
    });
    const { t, next } = transport(srv.url, { stream: true });
    t.submit(1, 0, 30, 1, 0);
    expect((await next())[0]).toMatchObject({ reqId: 1, status: 200, detail: Detail.MidStream, tokens: 30 });
    t.submit(2, 0, 30, 2, 0);
    expect((await next())[0]).toMatchObject({ reqId: 2, status: 200, detail: Detail.MidStream });
    expect(srv.seen[0].body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('a request submitted with RequestFlag.Stream streams on its own and tells its first token before the answer', async () => {
    const srv = await server((res, seen) => {
      if (seen.body.max_tokens === 2) return json(200, { usage: { total_tokens: 9 } })(res, seen);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"choices":[{"delta":{"role":"assistant","content":""}}]}\n\n');
      setTimeout(() => {
        res.write('data: {"choices":[{"delta":{"content":"hi"}}]}\n\n');
        res.end('data: {"choices":[],"usage":{"total_tokens":7}}\n\ndata: [DONE]\n\n');
      }, 5);
    });
    const told: string[] = [];
    let done: () => void = () => {};
    const over = new Promise<void>((resolve) => (done = resolve));
    const t = new HttpTransport(
      ['primary'],
      {
        onResponse: (reqId, status, _d, tokens) => {
          told.push(`${reqId}: ${status} ${tokens}`);
          if (told.filter((x) => x.includes(':')).length === 2) done();
        },
        onStream: (reqId, event) => void told.push(`${reqId} event ${event}`),
      },
      () => 0,
    );
    t.open(srv.url);
    closers.push(() => t.close());
    t.submit(1, 0, 30, 1, 0, RequestFlag.Stream);
    t.submit(2, 0, 30, 2, 0);
    await over;
    expect(told.filter((x) => x.startsWith('1'))).toEqual([`1 event ${StreamEvent.FirstToken}`, '1: 200 7']);
    expect(told.filter((x) => x.startsWith('2'))).toEqual(['2: 200 9']);
    const body = (max: number) =>
      srv.seen.find((x) => x.body.max_tokens === max)!.body as unknown as Record<string, unknown>;
    expect(body(1)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(body(2).stream).toBeUndefined();
  });

  it("a layer's stream that closes without its end marker reads as the simulator's upstream reports it: Cut, or MissingDone after its finish", async () => {
    const srv = await server((res, seen) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"choices":[{"delta":{"content":"hi"},"finish_reason":null}]}\n\n');
      if (seen.body.max_tokens === 1) return res.end(); // neither a finish nor [DONE]: cut
      if (seen.body.max_tokens === 2)
        return res.end(
          'data: {"choices":[{"delta":{},"finish_reason":"stop"}]}\n\ndata: {"choices":[],"usage":{"total_tokens":41}}\n\n',
        );
      res.end('data: {"error":{"message":"overloaded","type":"server_error"}}\n\n');
    });
    const { t, next } = transport(srv.url);
    t.submit(1, 0, 30, 1, 0, RequestFlag.Stream);
    expect((await next())[0]).toMatchObject({ reqId: 1, status: 200, detail: Detail.Cut, tokens: 30 });
    t.submit(2, 0, 30, 2, 0, RequestFlag.Stream);
    expect((await next())[0]).toMatchObject({ reqId: 2, status: 200, detail: Detail.MissingDone, tokens: 41 });
    t.submit(3, 0, 30, 3, 0, RequestFlag.Stream);
    expect((await next())[0]).toMatchObject({ reqId: 3, status: 200, detail: Detail.MidStream });
  });

  it("keeps when a layer's stream last brought a chunk, from its first token on, on the caller's timeline", async () => {
    let clock = 0;
    let first: () => void = () => {};
    const firstToken = new Promise<void>((resolve) => (first = resolve));
    const srv = await server((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"choices":[{"delta":{"role":"assistant","content":""}}]}\n\n');
    });
    const t = new HttpTransport(['primary'], { onResponse: () => {}, onStream: () => first() }, () => clock);
    t.open(srv.url);
    closers.push(() => t.close());
    t.submit(1, 0, 30, 5, 0, RequestFlag.Stream);
    while (srv.held.length === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    expect(t.lastEventAt(1)).toBe(-1); // headers and a role chunk: no content yet
    clock = 10;
    srv.held[0].write('data: {"choices":[{"delta":{"content":"hi"}}]}\n\n');
    await firstToken;
    expect(t.lastEventAt(1)).toBe(10);
    clock = 25;
    srv.held[0].write('data: {"choices":[{"delta":{"content":" there"}}]}\n\n');
    while (t.lastEventAt(1) !== 25) await new Promise<void>((resolve) => setImmediate(resolve));
    clock = 40; // nothing came since: the stream stands at 25 however late it is asked
    expect(t.lastEventAt(1)).toBe(25);
    t.cancel(1, 40);
    expect(t.lastEventAt(1)).toBe(-1);
  });

  it('a JSON answer to a stream request (a gateway that does not stream) is read as JSON', async () => {
    const srv = await server(json(200, { usage: { total_tokens: 33 } }));
    const { t, next } = transport(srv.url, { stream: true });
    t.submit(1, 0, 30, 3, 0);
    expect(await next()).toEqual([{ reqId: 1, status: 200, detail: Detail.None, tokens: 33, retryAfterMs: -1 }]);
  });

  it('counts refusals (4xx but 408, 429 and context length) and keeps the first one', async () => {
    const statuses = [404, 429, 400, 401];
    const srv = await server((res, seen) => {
      const status = statuses[seen.body.max_tokens];
      const body =
        status === 400
          ? { error: { code: 'context_length_exceeded', message: 'too long' } }
          : { error: { message: `no: ${status}` } };
      json(status, body)(res, seen);
    });
    const { t, next } = transport(srv.url);
    for (let i = 0; i < statuses.length; i++) {
      t.submit(i, 0, 10, i, 0);
      await next();
    }
    expect(t.answers).toBe(4);
    expect(t.refusals).toBe(2);
    expect(t.firstRefusal).toEqual({ status: 404, message: 'no: 404' });
  });
});

describe('wire format', () => {
  it('usageTokens reads either provider, or the parts when the total is missing', () => {
    expect(usageTokens('{"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}')).toBe(7);
    expect(usageTokens('{"usage":{"input_tokens":3,"output_tokens":5}}')).toBe(8);
    expect(usageTokens('{"usage":{"prompt_tokens":3,"completion_tokens":4}}')).toBe(7);
    expect(usageTokens('{"usage": { "total_tokens" : 12 }}'.replace('" : ', '": '))).toBe(12);
    expect(usageTokens('{}')).toBe(0);
  });

  it('StreamScan reads the end and the usage by structure, split across chunks', () => {
    const s = new StreamScan('anthropic');
    const text =
      'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":21,"output_tokens":1}}}\n\n' +
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}\n\n' +
      'event: message_stop\ndata: {"type":"message_stop"}\n\n';
    const bytes = Buffer.from(text);
    for (let i = 0; i < bytes.length; i += 7) s.push(bytes.subarray(i, i + 7));
    expect(s.ended).toBe(true);
    expect(s.errored).toBe(false);
    expect(s.tokens()).toBe(30);
  });
});

describe('detailOf', () => {
  it("reads both providers' error shapes", () => {
    expect(detailOf(429, { type: 'error', error: { type: 'rate_limit_error' } })).toBe(Detail.RateLimitRequests);
    expect(detailOf(429, { type: 'error', error: { type: 'billing_error' } })).toBe(Detail.InsufficientQuota);
    expect(detailOf(529, { type: 'error', error: { type: 'overloaded_error' } })).toBe(Detail.Overloaded);
    expect(
      detailOf(400, {
        type: 'error',
        error: { type: 'invalid_request_error', message: 'prompt is too long: 200000 tokens > 199999 maximum' },
      }),
    ).toBe(Detail.ContextLength);
    expect(detailOf(400, { error: { code: 'invalid_type' } })).toBe(Detail.None);
    expect(detailOf(429, undefined)).toBe(Detail.RateLimitRequests);
    expect(detailOf(429, 'text')).toBe(Detail.RateLimitRequests);
  });
});
