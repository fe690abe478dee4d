import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../src/engine/random.js';
import type { FaultPhaseInput } from '../../src/fake-upstream/fault-phases.js';
import { proxyTo, serveUpstream, until } from './proxy-harness.js';

const USER = [{ role: 'user' as const, content: 'Say something about retry storms.' }];
/** Answers of a fixed length: the stream has that many content events. */
const LENGTH = { headers: { 'x-stormlab-output-tokens': '8' } };

async function setup(faults: FaultPhaseInput[], extra: Parameters<typeof proxyTo>[1] = {}) {
  const fu = await serveUpstream();
  const proxy = await proxyTo(fu.url, { faults, random: new SeededRandom(1), ...extra });
  const openai = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'k', maxRetries: 0 });
  const anthropic = new Anthropic({ baseURL: proxy.url, apiKey: 'k', maxRetries: 0 });
  const served = () => fu.stats().routes.reduce((n, r) => n + r.requests, 0);
  return { fu, proxy, openai, anthropic, served };
}

async function caught(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

describe('stormlab proxy faults, as the official SDKs see them', () => {
  it("errors: the provider's own 429 with retry-after and x-should-retry, the upstream never asked", async () => {
    const { openai, anthropic, served } = await setup([
      { kind: 'errors', status: 429, retryAfterMs: 2000, shouldRetry: false, route: '/v1/chat/completions' },
      { kind: 'outage', status: 529, route: '/v1/messages' },
    ]);
    const e = await caught(openai.chat.completions.create({ model: 'a', messages: USER }));
    expect(e).toBeInstanceOf(OpenAI.RateLimitError);
    const err = e as InstanceType<typeof OpenAI.RateLimitError>;
    expect(err.headers.get('retry-after')).toBe('2');
    expect(err.headers.get('retry-after-ms')).toBe('2000');
    expect(err.headers.get('x-should-retry')).toBe('false');
    expect((err.error as { code: string }).code).toBe('rate_limit_exceeded');
    const a = await caught(anthropic.messages.create({ model: 'a', max_tokens: 10, messages: USER }));
    expect(a).toBeInstanceOf(Anthropic.APIError);
    expect((a as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
    expect(((a as InstanceType<typeof Anthropic.APIError>).error as { error: { type: string } }).error.type).toBe(
      'overloaded_error',
    );
    expect(served()).toBe(0);
  });

  /** The faults the proxy answers itself: each SDK's own error class and the provider's body, the upstream never asked. */
  const ANSWERED: Array<[string, FaultPhaseInput, [unknown, number, object], [unknown, number, object]]> = [
    [
      'errors 500',
      { kind: 'errors', status: 500 },
      [OpenAI.InternalServerError, 500, { type: 'server_error' }],
      [Anthropic.InternalServerError, 500, { error: { type: 'api_error' } }],
    ],
    [
      'outage 503',
      { kind: 'outage', status: 503 },
      [OpenAI.InternalServerError, 503, { type: 'server_error' }],
      [Anthropic.APIError, 503, { error: { type: 'overloaded_error' } }],
    ],
    [
      'errors 529 (Anthropic overloaded; OpenAI has no 529: its 503)',
      { kind: 'errors', status: 529 },
      [OpenAI.InternalServerError, 503, { type: 'server_error' }],
      [Anthropic.APIError, 529, { error: { type: 'overloaded_error' } }],
    ],
    [
      'quota',
      { kind: 'quota' },
      [OpenAI.RateLimitError, 429, { code: 'insufficient_quota' }],
      [Anthropic.RateLimitError, 429, { error: { type: 'billing_error' } }],
    ],
    [
      'context-length',
      { kind: 'context-length', contextTokens: 5 },
      [OpenAI.BadRequestError, 400, { code: 'context_length_exceeded' }],
      [
        Anthropic.BadRequestError,
        400,
        { error: { type: 'invalid_request_error', message: expect.stringMatching(/^prompt is too long/) } },
      ],
    ],
    [
      'content-filter (mode: reject)',
      { kind: 'content-filter', mode: 'reject' },
      [OpenAI.BadRequestError, 400, { code: 'content_filter' }],
      [Anthropic.BadRequestError, 400, { error: { type: 'invalid_request_error' } }],
    ],
  ];

  it.each(ANSWERED)('%s: each SDK raises its own error with the provider body', async (_, fault, o, a) => {
    const { openai, anthropic, served } = await setup([fault]);
    const e = (await caught(openai.chat.completions.create({ model: 'a', messages: USER }))) as InstanceType<
      typeof OpenAI.APIError
    >;
    expect(e).toBeInstanceOf(o[0] as typeof OpenAI.APIError);
    expect(e.status).toBe(o[1]);
    expect(e.error).toMatchObject(o[2]);
    const x = (await caught(anthropic.messages.create({ model: 'a', max_tokens: 10, messages: USER }))) as InstanceType<
      typeof Anthropic.APIError
    >;
    expect(x).toBeInstanceOf(a[0] as typeof Anthropic.APIError);
    expect(x.status).toBe(a[1]);
    expect(x.error).toMatchObject(a[2]);
    expect(x.requestID).toMatch(/^req_/);
    expect(served()).toBe(0);
  });

  it('cut and stall through the Anthropic SDK: the stream ends without message_stop, or stops mid-answer', async () => {
    const { anthropic } = await setup([
      { kind: 'cut', afterTokens: 3, model: 'a' },
      { kind: 'stall', afterTokens: 2, model: 'b' },
    ]);
    const texts: string[] = [];
    const types: string[] = [];
    const s = await anthropic.messages.create({ model: 'a', max_tokens: 50, messages: USER, stream: true }, LENGTH);
    for await (const e of s) {
      types.push(e.type);
      if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') texts.push(e.delta.text);
    }
    expect(texts).toHaveLength(3);
    expect(types).not.toContain('message_stop');
    const abort = new AbortController();
    const stalled = await anthropic.messages.create(
      { model: 'b', max_tokens: 50, messages: USER, stream: true },
      { ...LENGTH, signal: abort.signal },
    );
    const got: string[] = [];
    const reading = (async () => {
      for await (const e of stalled)
        if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') got.push(e.delta.text);
    })();
    await until(() => got.length === 2, 'two tokens read before the stall');
    for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(got).toHaveLength(2);
    abort.abort();
    await reading.catch(() => undefined);
  });

  it('reset: a connection error; hang: no answer until the client leaves', async () => {
    const { proxy, openai, served } = await setup([
      { kind: 'reset', route: '/v1/chat/completions' },
      { kind: 'hang', route: '/v1/messages' },
    ]);
    expect(await caught(openai.chat.completions.create({ model: 'a', messages: USER }))).toBeInstanceOf(
      OpenAI.APIConnectionError,
    );
    const abort = new AbortController();
    const hung = request(`${proxy.url}/v1/messages`, {
      method: 'POST',
      body: '{"model":"a","max_tokens":5,"messages":[]}',
      signal: abort.signal,
    });
    await until(() => proxy.stats().inFlight === 1, 'the hung request in flight');
    expect(served()).toBe(0);
    abort.abort();
    await caught(hung);
    await until(() => proxy.stats().inFlight === 0, 'the hung request closed');
    expect(proxy.stats().routes.find((r) => r.route === '/v1/messages')?.status).toEqual({ cancelled: 1 });
  });

  it('a model, a route or a share of requests', async () => {
    const { openai, served } = await setup([
      { kind: 'errors', status: 503, model: 'b' },
      { kind: 'errors', status: 500, rate: 0.5, model: 'a', route: '/v1/embeddings' },
    ]);
    await openai.chat.completions.create({ model: 'a', messages: USER, max_tokens: 5 });
    expect(await caught(openai.chat.completions.create({ model: 'b', messages: USER }))).toBeInstanceOf(
      OpenAI.InternalServerError,
    );
    const outcomes: string[] = [];
    for (let i = 0; i < 30; i++)
      outcomes.push(
        await openai.embeddings.create({ model: 'a', input: 'x' }).then(
          () => 'ok',
          (e: { status: number }) => String(e.status),
        ),
      );
    expect(new Set(outcomes)).toEqual(new Set(['ok', '500']));
    expect(served()).toBe(1 + outcomes.filter((o) => o === 'ok').length);
  });

  it('cut after N tokens: the stream ends cleanly, without its finish, though the upstream sent it all', async () => {
    const { fu, openai } = await setup([{ kind: 'cut', afterTokens: 3 }]);
    const stream = await openai.chat.completions.create(
      { model: 'a', messages: USER, stream: true, max_tokens: 50 },
      LENGTH,
    );
    const deltas: string[] = [];
    const finishes: unknown[] = [];
    for await (const c of stream) {
      if (c.choices[0]?.delta.content) deltas.push(c.choices[0].delta.content);
      if (c.choices[0]?.finish_reason) finishes.push(c.choices[0].finish_reason);
    }
    expect(deltas).toHaveLength(3);
    expect(finishes).toEqual([]);
    expect(fu.stats().routes[0].status).toEqual({ '200': 1 });
  });

  it("midstream: the provider's error event after the 200, raised by each SDK", async () => {
    const { openai, anthropic } = await setup([{ kind: 'midstream', afterTokens: 2 }]);
    const got: string[] = [];
    const e = await caught(
      (async () => {
        const s = await openai.chat.completions.create(
          { model: 'a', messages: USER, stream: true, max_tokens: 50 },
          LENGTH,
        );
        for await (const c of s) if (c.choices[0]?.delta.content) got.push(c.choices[0].delta.content);
      })(),
    );
    expect(e).toBeInstanceOf(OpenAI.APIError);
    expect(got).toHaveLength(2);
    const a = await caught(
      (async () => {
        const s = await anthropic.messages.create({ model: 'a', max_tokens: 50, messages: USER, stream: true }, LENGTH);
        for await (const _ of s);
      })(),
    );
    expect(a).toBeInstanceOf(Anthropic.APIError);
  });

  it('malformed event: each SDK fails to parse the stream', async () => {
    const { openai, anthropic } = await setup([{ kind: 'malformed' }]);
    const e = await caught(
      (async () => {
        for await (const _ of await openai.chat.completions.create(
          { model: 'a', messages: USER, stream: true, max_tokens: 50 },
          LENGTH,
        ));
      })(),
    );
    expect(e).toBeInstanceOf(Error);
    const a = await caught(
      (async () => {
        for await (const _ of await anthropic.messages.create(
          { model: 'a', max_tokens: 50, messages: USER, stream: true },
          LENGTH,
        ));
      })(),
    );
    expect(a).toBeInstanceOf(Error);
  });

  it('missing [DONE]: the finish comes, the terminal event never does', async () => {
    const { proxy } = await setup([{ kind: 'missing-done' }]);
    const res = await request(`${proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-stormlab-output-tokens': '4' },
      body: JSON.stringify({ model: 'a', stream: true, max_tokens: 20, messages: USER }),
    });
    const datas = (await res.body.text())
      .split('\n\n')
      .filter(Boolean)
      .map((e) => e.replace(/^data: /, ''));
    expect(datas).not.toContain('[DONE]');
    expect(JSON.parse(datas[datas.length - 1]).choices[0].finish_reason).toBe('stop');
    expect(proxy.requests()[0].fault).toBe('MissingDone');
  });

  it('stall with the connection open: tokens stop mid-answer while the upstream has finished', async () => {
    const { fu, proxy, openai } = await setup([{ kind: 'stall', afterTokens: 2 }]);
    const abort = new AbortController();
    const stream = await openai.chat.completions.create(
      { model: 'a', messages: USER, stream: true, max_tokens: 50 },
      { ...LENGTH, signal: abort.signal },
    );
    const got: string[] = [];
    const reading = (async () => {
      for await (const c of stream) if (c.choices[0]?.delta.content) got.push(c.choices[0].delta.content);
    })();
    await until(
      () => got.length === 2 && fu.stats().routes[0]?.status['200'] === 1,
      'the upstream done, two tokens read',
    );
    expect(proxy.stats().inFlight).toBe(1);
    expect(got).toHaveLength(2);
    abort.abort();
    await reading.catch(() => undefined);
    await until(() => proxy.stats().inFlight === 0, 'the stalled request closed by its client');
    expect(got).toHaveLength(2);
    expect(proxy.requests()[0].fault).toBe('Stalled');
  });

  it('RPM and TPM limits: 429s in the provider shape; TPM reserves an estimate and counts the usage', async () => {
    const { proxy, openai } = await setup([], { quotas: { rpm: 2, tpm: 1000 } });
    const r = await openai.chat.completions.create({ model: 'a', messages: USER, max_tokens: 30 });
    const used = r.usage?.total_tokens ?? 0;
    expect(used).toBeGreaterThan(0);
    expect(proxy.stats().models[0].quotas.tokens?.remaining).toBe(1000 - used);
    const big = await caught(openai.chat.completions.create({ model: 'a', messages: USER, max_tokens: 5000 }));
    expect(big).toBeInstanceOf(OpenAI.RateLimitError);
    await openai.chat.completions.create({ model: 'a', messages: USER, max_tokens: 5 });
    const e = await caught(openai.chat.completions.create({ model: 'a', messages: USER, max_tokens: 5 }));
    expect(e).toBeInstanceOf(OpenAI.RateLimitError);
    const err = e as InstanceType<typeof OpenAI.RateLimitError>;
    expect(Number(err.headers.get('retry-after-ms'))).toBeGreaterThan(0);
    expect(err.headers.get('x-ratelimit-remaining-requests')).toBe('0');
  });

  it('faults installed through the control API, as serve takes them', async () => {
    const { proxy, openai } = await setup([]);
    const put = await request(`${proxy.url}/_stormlab/faults`, {
      method: 'PUT',
      body: JSON.stringify([{ kind: 'outage', status: 503 }]),
    });
    expect(put.statusCode).toBe(200);
    await put.body.dump();
    expect(await caught(openai.chat.completions.create({ model: 'a', messages: USER }))).toBeInstanceOf(
      OpenAI.InternalServerError,
    );
    const bad = await request(`${proxy.url}/_stormlab/faults`, {
      method: 'PUT',
      body: JSON.stringify([{ kind: 'prefill-rejected' }]),
    });
    expect(bad.statusCode).toBe(400);
    expect(await bad.body.text()).toContain('faults[0].kind prefill-rejected cannot be injected by a proxy');
    const stats = await request(`${proxy.url}/_stormlab/stats`);
    expect(JSON.parse(await stats.body.text()).routes[0].status).toEqual({ '503': 1 });
    const metrics = await request(`${proxy.url}/metrics`);
    expect(await metrics.body.text()).toContain(
      'stormlab_http_route_responses_total{route="/v1/chat/completions",status="503"} 1',
    );
  });

  it("a real SDK's tools loop through the proxy", async () => {
    const { openai, served } = await setup([]);
    const tools = [
      {
        type: 'function' as const,
        function: {
          name: 'lookup',
          parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
        },
      },
    ];
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'look it up' }];
    const first = await openai.chat.completions.create({ model: 'a', messages, tools });
    const call = first.choices[0].message.tool_calls?.[0];
    expect(call?.type).toBe('function');
    messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call?.id ?? '', content: '{"answer":42}' });
    const second = await openai.chat.completions.create({ model: 'a', messages, tools, max_tokens: 20 });
    expect(second.choices[0].message.content).toBeTruthy();
    expect(second.choices[0].message.tool_calls ?? []).toEqual([]);
    expect(served()).toBe(2);
  });
});
