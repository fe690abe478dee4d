import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { guardedFetch, type GuardedFetchOptions } from '../../src/integrations/guarded-fetch.js';
import { HTTP_DEFAULTS } from '../../src/integrations/http-defaults.js';
import {
  chatBody,
  completion,
  delta,
  engineSetup,
  openaiStream,
  roleChunk,
  until,
  postJson,
  useGuardedAgents,
  useScriptedServers,
} from './scripted-server.js';

const serve = useScriptedServers();
const guarded = useGuardedAgents();

const ask = { model: 'gpt-4o', messages: [{ role: 'user' as const, content: 'Capital of France?' }] };
const models = [
  { name: 'primary', model: 'gpt-4o' },
  { name: 'mini', model: 'gpt-4o-mini' },
];

function client(origin: string, options: GuardedFetchOptions, maxRetries = 0) {
  return new OpenAI({ apiKey: 'test', baseURL: `${origin}/v1`, maxRetries, fetch: guardedFetch(options) });
}

async function text(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>): Promise<string> {
  let t = '';
  for await (const c of stream) t += c.choices[0]?.delta?.content ?? '';
  return t;
}

describe('failures before the first token are retried or failed over invisibly (guardedFetch + OpenAI SDK)', () => {
  it('a cut before the first content token is retried; the caller sees one clean stream', async () => {
    const s = await serve([{ sse: [roleChunk], cut: true }, { sse: openaiStream('Paris.') }]);
    const { base, run, of } = engineSetup();
    const c = client(s.origin, { ...base, targets: [s.origin] });
    expect(await run(text(await run(c.chat.completions.create({ ...ask, stream: true }))))).toBe('Paris.');
    expect(s.requests).toHaveLength(2);
    expect(of('retry').map((e) => e.class)).toEqual(['stream_cut']);
  });

  it("a provider's error event before the first token is classified from its body and retried", async () => {
    const s = await serve([
      { sse: [roleChunk, { error: { message: 'The server had an error', type: 'server_error' } }] },
      { sse: openaiStream('Paris.') },
    ]);
    const { base, run, of } = engineSetup();
    const c = client(s.origin, { ...base, targets: [s.origin] });
    expect(await run(text(await run(c.chat.completions.create({ ...ask, stream: true }))))).toBe('Paris.');
    expect(of('retry').map((e) => e.class)).toEqual(['server_error']);
  });

  it('no first token within firstTokenMs falls over to the next model with the original request', async () => {
    const s = await serve([{ sse: [roleChunk], stall: true }, { sse: openaiStream('Paris.') }]);
    const { base, clock, of } = engineSetup();
    const f = guardedFetch({ ...base, targets: models, stream: { ...base.stream, firstTokenMs: 20_000 } });
    const c = new OpenAI({ apiKey: 'test', baseURL: `${s.origin}/v1`, maxRetries: 0, fetch: f });
    const pending = c.chat.completions.create({ ...ask, stream: true }).withResponse();
    await until(() => s.requests.length === 1);
    clock.advance(20_000);
    const { data, response } = await pending;
    expect(await text(data)).toBe('Paris.');
    expect(response.headers.get('x-stormlab-target')).toBe('mini');
    expect(of('fallback')).toEqual([expect.objectContaining({ from: 'primary', to: 'mini', why: 'stream_stall' })]);
    const [first, second] = s.requests.map((r) => JSON.parse(r.body) as Record<string, unknown>);
    expect(first.model).toBe('gpt-4o');
    // The fallback gets the caller's request with its model rewritten: no prefill of partial text.
    expect(second).toEqual({ ...first, model: 'gpt-4o-mini' });
  });

  it('a silent provider (no headers) falls over at the stream header wait', async () => {
    const a = await serve([{ hang: true }]);
    const b = await serve([{ sse: openaiStream('Paris.') }]);
    const { base, clock, of } = engineSetup();
    const c = client(a.origin, {
      ...base,
      targets: [a.origin, b.origin],
      stream: { ...base.stream, headersTimeoutMs: HTTP_DEFAULTS.stream.headersTimeoutMs },
    });
    const start = clock.now();
    const pending = c.chat.completions.create({ ...ask, stream: true });
    await until(() => a.requests.length === 1);
    clock.advance(HTTP_DEFAULTS.stream.headersTimeoutMs);
    expect(await text(await pending)).toBe('Paris.');
    expect(clock.now() - start).toBe(10_000);
    expect(of('fallback')).toEqual([expect.objectContaining({ why: 'timeout' })]);
  });

  it("commit: 'complete' retries a stream cut after its first tokens; the caller sees only the whole answer", async () => {
    const s = await serve([{ sse: [roleChunk, delta('Lon')], cut: true }, { sse: openaiStream('Paris.') }]);
    const { base, run, of } = engineSetup();
    const c = client(s.origin, { ...base, targets: [s.origin], stream: { ...base.stream, commit: 'complete' } });
    expect(await run(text(await run(c.chat.completions.create({ ...ask, stream: true }))))).toBe('Paris.');
    expect(of('retry').map((e) => e.class)).toEqual(['stream_cut']);
  });

  it('a non-streamed call falls back to a model target; the provider model field is left as it is', async () => {
    const s = await serve([{ status: 503 }, { status: 503 }, { status: 503 }, { json: completion('Paris.') }]);
    const { base, run } = engineSetup();
    const c = client(s.origin, { ...base, targets: models });
    const { data, response } = await run(c.chat.completions.create(ask).withResponse());
    expect(data.model).toBe('gpt-4o-mini'); // what the scripted provider says, untouched
    expect(response.headers.get('x-stormlab-target')).toBe('mini');
    expect(s.requests.map((r) => (JSON.parse(r.body) as { model: string }).model)).toEqual([
      'gpt-4o',
      'gpt-4o',
      'gpt-4o',
      'gpt-4o-mini',
    ]);
  });

  it('the give-up answer carries x-should-retry: false, so an SDK left with retries on does not stack them', async () => {
    const s = await serve([{ status: 503, json: { error: { message: 'busy', type: 'server_error' } } }]);
    const { base, run } = engineSetup();
    const c = client(s.origin, { ...base, targets: [s.origin] }, 2);
    const err = await run(c.chat.completions.create(ask)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect((err as InstanceType<typeof OpenAI.APIError>).headers?.get('x-should-retry')).toBe('false');
    expect(s.requests).toHaveLength(3); // the engine's 3, not 3 × 3
  });

  it('a rewrite hook shapes the request for its target, from the original each time', async () => {
    const s = await serve([{ status: 503 }, { json: completion('ok') }]);
    const { base, run } = engineSetup();
    const c = client(s.origin, {
      ...base,
      maxAttempts: 1,
      targets: [
        { name: 'primary' },
        {
          name: 'other',
          model: 'other-model',
          rewrite: (r) => ({
            ...r,
            headers: { ...r.headers, 'x-key': 'other' },
            json: { ...(r.json as object), seed: 7 },
          }),
        },
      ],
    });
    await run(c.chat.completions.create(ask));
    expect(JSON.parse(s.requests[1].body)).toEqual({ ...ask, model: 'other-model', seed: 7 });
    expect(s.requests[1].headers['x-key']).toBe('other');
    expect(s.requests[0].headers['x-key']).toBeUndefined();
  });
});

describe('the stream guard through the undici interceptor', () => {
  it('a cut before the first content token is retried; the caller gets one clean stream', async () => {
    const s = await serve([{ sse: [roleChunk], cut: true }, { sse: openaiStream('Paris.') }]);
    const { base, run, of } = engineSetup();
    const res = await run(
      postJson(
        guarded({ ...base, targets: [s.origin] }),
        `${s.origin}/v1/chat/completions`,
        chatBody({ stream: true }),
      ),
    );
    const body = await run(res.body.text());
    expect(body).toBe(
      openaiStream('Paris.')
        .map((e) => `data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`)
        .join(''),
    );
    expect(res.headers['x-stormlab-target']).toBe(s.origin);
    expect(of('retry').map((e) => e.class)).toEqual(['stream_cut']);
  });

  it('a first-token stall falls over to the next model, request body rewritten', async () => {
    const s = await serve([{ sse: [roleChunk], stall: true }, { sse: openaiStream('Paris.') }]);
    const { base, clock, of } = engineSetup();
    const pending = postJson(
      guarded({ ...base, targets: models, stream: { ...base.stream, firstTokenMs: 20_000 } }),
      `${s.origin}/v1/chat/completions`,
      { ...ask, stream: true },
    );
    await until(() => s.requests.length === 1);
    clock.advance(20_000);
    const res = await pending;
    expect(await res.body.text()).toContain('Paris.');
    expect(res.headers['x-stormlab-target']).toBe('mini');
    expect(of('fallback')).toEqual([expect.objectContaining({ why: 'stream_stall' })]);
    expect(JSON.parse(s.requests[1].body)).toEqual({ ...ask, stream: true, model: 'gpt-4o-mini' });
  });

  it('skips a malformed event and counts it as stream_malformed', async () => {
    const s = await serve([{ sse: [roleChunk, delta('Par'), 'not json', delta('is.', 'stop'), '[DONE]'] }]);
    const { base, run, of } = engineSetup();
    const res = await run(
      postJson(
        guarded({ ...base, targets: [s.origin] }),
        `${s.origin}/v1/chat/completions`,
        chatBody({ stream: true }),
      ),
    );
    const body = await run(res.body.text());
    expect(body).not.toContain('not json');
    expect(body).toContain('"is."');
    expect(of('stream_malformed')).toHaveLength(1);
  });

  it('a stall after the first token ends the caller stream at idleMs with an in-band error', async () => {
    const s = await serve([{ sse: [roleChunk, delta('Par')], stall: true }]);
    const { base, clock } = engineSetup();
    const res = await postJson(
      guarded({ ...base, targets: [s.origin], stream: { ...base.stream, idleMs: 5000 } }),
      `${s.origin}/v1/chat/completions`,
      chatBody({ stream: true }),
    );
    let got = '';
    res.body.on('data', (c: Buffer) => (got += c.toString()));
    await until(() => got.includes('"Par"') && clock.nextTimerAt() === clock.now() + 5000);
    clock.advance(5000);
    await until(() => got.includes('stream_stall'));
    expect(got).toMatch(/"code":"stream_stall"\}\}\n\n$/);
  });
});
