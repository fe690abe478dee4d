import { Readable } from 'node:stream';
import { Agent, MockAgent, request, type Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ShedError } from '../../src/engine/errors.js';
import { estimateChatTokens } from '../../src/engine/token-estimator.js';
import type { EngineHttpOptions } from '../../src/integrations/engine-http-options.js';
import { stormlab } from '../../src/integrations/undici-interceptor.js';
import {
  chatBody,
  completion,
  engineSetup,
  openaiError,
  postJson,
  scriptedServer,
  until,
  type Reply,
  type ScriptedServer,
} from './scripted-server.js';

const servers: ScriptedServer[] = [];
const agents: Agent[] = [];
async function serve(script: Reply[]): Promise<ScriptedServer> {
  const s = await scriptedServer(script);
  servers.push(s);
  return s;
}
function guarded(options: EngineHttpOptions): Dispatcher {
  const agent = new Agent();
  agents.push(agent);
  return agent.compose(stormlab(options));
}
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('stormlab undici interceptor', () => {
  it('passes a success through with its body intact', async () => {
    const s = await serve([{ json: completion('Paris.'), headers: { 'x-request-id': 'r1' } }]);
    const { base, run } = engineSetup();
    const res = await run(
      postJson(guarded({ ...base, targets: [s.origin] }), `${s.origin}/v1/chat/completions`, chatBody()),
    );
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-request-id']).toBe('r1');
    expect(await res.body.json()).toEqual(completion('Paris.'));
    expect(JSON.parse(s.requests[0].body)).toEqual(chatBody());
  });

  it('retries a 503 and answers with the 200', async () => {
    const s = await serve([{ status: 503, text: 'upstream busy' }, { json: completion('ok') }]);
    const { base, run, of } = engineSetup();
    const res = await run(
      postJson(guarded({ ...base, targets: [s.origin] }), `${s.origin}/v1/chat/completions`, chatBody()),
    );
    expect(res.statusCode).toBe(200);
    expect((await res.body.json()) as unknown).toMatchObject({ choices: [{ message: { content: 'ok' } }] });
    expect(s.requests).toHaveLength(2);
    expect(of('retry').map((e) => e.class)).toEqual(['server_error']);
  });

  it('honours retry-after-ms on a 429 as the lower bound of the wait', async () => {
    const s = await serve([
      {
        ...openaiError(429, 'requests', 'rate_limit_exceeded', 'Rate limit reached'),
        headers: { 'retry-after-ms': '2500' },
      },
      { json: completion('ok') },
    ]);
    const { base, run, of, clock } = engineSetup();
    const start = clock.now();
    const res = await run(
      postJson(guarded({ ...base, targets: [s.origin] }), `${s.origin}/v1/chat/completions`, chatBody()),
    );
    await res.body.text();
    expect(of('retry')).toEqual([expect.objectContaining({ class: 'rate_limited', delayMs: 2500 })]);
    expect(clock.now() - start).toBe(2500);
  });

  it('does not retry a 400 and returns it as it is', async () => {
    const bad = openaiError(400, 'invalid_request_error', 'invalid_value', 'bad temperature');
    const s = await serve([bad]);
    const { base, run } = engineSetup();
    const res = await run(
      postJson(guarded({ ...base, targets: [s.origin] }), `${s.origin}/v1/chat/completions`, chatBody()),
    );
    expect(res.statusCode).toBe(400);
    expect(await res.body.json()).toEqual(bad.json);
    expect(s.requests).toHaveLength(1);
  });

  it('falls back to the second origin on insufficient_quota, keeping path and body', async () => {
    const a = await serve([
      openaiError(429, 'insufficient_quota', 'insufficient_quota', 'You exceeded your current quota'),
    ]);
    const b = await serve([{ json: completion('from b') }]);
    const { base, run, of } = engineSetup();
    const res = await run(
      postJson(
        guarded({ ...base, targets: [a.origin, b.origin] }),
        `${a.origin}/v1/chat/completions?api-version=1`,
        chatBody(),
      ),
    );
    expect((await res.body.json()) as unknown).toMatchObject({ choices: [{ message: { content: 'from b' } }] });
    expect(b.requests[0].url).toBe('/v1/chat/completions?api-version=1');
    expect(b.requests[0].body).toBe(a.requests[0].body);
    expect(of('fallback')).toEqual([expect.objectContaining({ from: a.origin, to: b.origin, why: 'quota_exhausted' })]);
  });

  it('falls back on context_length_exceeded', async () => {
    const a = await serve([
      openaiError(400, 'invalid_request_error', 'context_length_exceeded', 'maximum context length is 8192 tokens'),
    ]);
    const b = await serve([{ json: completion('long') }]);
    const { base, run, of } = engineSetup();
    const res = await run(
      postJson(guarded({ ...base, targets: [a.origin, b.origin] }), `${a.origin}/v1/chat/completions`, chatBody()),
    );
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    expect(of('fallback').map((e) => e.why)).toEqual(['context_length']);
  });

  it('hands a 200 refusal back as it is by default, and fails it over with onContentFilter: fallback', async () => {
    for (const refusal of [
      {
        object: 'chat.completion',
        model: 'gpt-4o',
        choices: [{ index: 0, message: { role: 'assistant', content: null }, finish_reason: 'content_filter' }],
      },
      {
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [],
        stop_reason: 'refusal',
        stop_details: { type: 'refusal', explanation: 'Declined.' },
      },
    ]) {
      const a = await serve([{ json: refusal }]);
      const b = await serve([{ json: completion('from b') }]);
      const { base, run, of } = engineSetup();
      const res = await run(
        postJson(guarded({ ...base, targets: [a.origin, b.origin] }), `${a.origin}/v1/chat/completions`, chatBody()),
      );
      expect(res.statusCode).toBe(200);
      expect((await res.body.json()) as unknown).toEqual(refusal);
      expect([a.requests.length, b.requests.length]).toEqual([1, 0]);
      expect([of('retry').length, of('fallback').length]).toEqual([0, 0]);
    }
    const a = await serve([
      {
        json: {
          object: 'chat.completion',
          model: 'gpt-4o',
          choices: [{ index: 0, message: { role: 'assistant', content: null }, finish_reason: 'content_filter' }],
        },
      },
    ]);
    const b = await serve([{ json: completion('from b') }]);
    const { base, run, of } = engineSetup();
    const d = guarded({ ...base, targets: [a.origin, b.origin], onContentFilter: 'fallback' });
    const res = await run(postJson(d, `${a.origin}/v1/chat/completions`, chatBody()));
    expect((await res.body.json()) as unknown).toMatchObject({ choices: [{ message: { content: 'from b' } }] });
    expect(of('fallback').map((e) => e.why)).toEqual(['content_filter']);
  });

  it('answers a spent retry budget as guardedFetch does: a synthetic 503 in the provider shape, not retried', async () => {
    const s = await serve([{ status: 503 }]);
    const { base, run } = engineSetup();
    const d = guarded({ ...base, targets: [s.origin], retryBudget: { ratio: 0, minRetriesPerSec: 0 } });
    const res = await run(postJson(d, `${s.origin}/v1/chat/completions`, chatBody()));
    expect(res.statusCode).toBe(503);
    expect(res.headers).toMatchObject({ 'x-should-retry': 'false', 'x-stormlab-shed': 'budget' });
    expect((await res.body.json()) as unknown).toMatchObject({ error: { type: 'stormlab_shed', code: 'budget' } });
    expect(s.requests).toHaveLength(1);
  });

  it('with shedAnswers: false rejects with ShedError("budget")', async () => {
    const s = await serve([{ status: 503 }]);
    const { base, run } = engineSetup();
    const d = guarded({
      ...base,
      targets: [s.origin],
      retryBudget: { ratio: 0, minRetriesPerSec: 0 },
      shedAnswers: false,
    });
    const err = await run(postJson(d, `${s.origin}/v1/chat/completions`, chatBody())).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ShedError);
    expect(err).toMatchObject({ reason: 'budget' });
    expect((err as Error).cause).toBeUndefined(); // not the engine's last attempt outcome
    expect(s.requests).toHaveLength(1);
  });

  it('reserves the body estimate and reconciles it from usage', async () => {
    const s = await serve([{ json: completion('ok', { prompt_tokens: 40, completion_tokens: 2, total_tokens: 42 }) }]);
    const { base, run, of } = engineSetup();
    const limits = [{ name: 'tpm', unit: 'tokens' as const, rate: 60_000, per: 'minute' as const, keyBy: 'model' }];
    const body = chatBody({ max_tokens: 200 });
    const res = await run(postJson(guarded({ ...base, limits }), `${s.origin}/v1/chat/completions`, body));
    await res.body.dump();
    expect(of('reserve')).toEqual([expect.objectContaining({ tokens: estimateChatTokens(body) })]);
    expect(of('reconcile')).toEqual([expect.objectContaining({ reserved: estimateChatTokens(body), actual: 42 })]);
  });

  it('streams a 2xx through and reconciles from the final usage chunk', async () => {
    const chunk = (content: string) => ({ choices: [{ index: 0, delta: { content } }], usage: null });
    const usage = { choices: [], usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } };
    const s = await serve([
      { status: 429, headers: { 'retry-after': '1' } },
      { sse: [chunk('Par'), chunk('is.'), usage, '[DONE]'] },
    ]);
    const { base, run, of } = engineSetup();
    const limits = [{ name: 'tpm', unit: 'tokens' as const, rate: 60_000, per: 'minute' as const }];
    const res = await run(
      postJson(
        guarded({ ...base, targets: [s.origin], limits }),
        `${s.origin}/v1/chat/completions`,
        chatBody({ stream: true }),
      ),
    );
    expect(res.headers['content-type']).toBe('text/event-stream');
    const text = await run(res.body.text());
    expect(text.split('\n\n').filter(Boolean)).toHaveLength(4);
    expect(of('retry')).toEqual([expect.objectContaining({ delayMs: 1000 })]);
    expect(of('reconcile').map((e) => e.actual)).toEqual([0, 11]);
  });

  it('reconciles an Anthropic stream from message_start and message_delta', async () => {
    const s = await serve([
      {
        sse: [
          { type: 'message_start', message: { usage: { input_tokens: 25, output_tokens: 1 } } },
          { type: 'content_block_delta', delta: { type: 'text_delta', text: 'Hi' } },
          { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 6 } },
          { type: 'message_stop' },
        ],
      },
    ]);
    const { base, run, of } = engineSetup();
    const limits = [{ name: 'tpm', unit: 'tokens' as const, rate: 60_000, per: 'minute' as const }];
    const body = { model: 'claude-x', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'hello' }] };
    const res = await run(postJson(guarded({ ...base, limits }), `${s.origin}/v1/messages`, body));
    await run(res.body.text());
    expect(of('reconcile')).toEqual([expect.objectContaining({ reserved: estimateChatTokens(body), actual: 31 })]);
  });

  it('does not retry a stream that breaks after its first token; the caller gets an in-band error', async () => {
    const s = await serve([
      { sse: [{ choices: [{ delta: { content: 'Par' } }] }], cut: true },
      { json: completion('never') },
    ]);
    const { base, run, of } = engineSetup();
    const res = await run(
      postJson(
        guarded({ ...base, targets: [s.origin] }),
        `${s.origin}/v1/chat/completions`,
        chatBody({ stream: true }),
      ),
    );
    expect(res.statusCode).toBe(200);
    const text = await run(res.body.text());
    expect(text).toContain('"Par"');
    expect(text).toMatch(/data: \{"error":\{[^\n]*"code":"stream_cut"\}\}\n\n$/);
    expect(s.requests).toHaveLength(1);
    expect(of('attempt')).toHaveLength(1);
    expect(of('retry')).toEqual([]);
  });

  it('works over a MockAgent: 529 overloaded, then fallback after attempts run out', async () => {
    const mock = new MockAgent();
    mock.disableNetConnect();
    const overloaded = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
    mock.get('https://a.example').intercept({ path: '/v1/messages', method: 'POST' }).reply(529, overloaded).times(2);
    mock
      .get('https://b.example')
      .intercept({ path: '/v1/messages', method: 'POST' })
      .reply(200, { usage: { input_tokens: 3, output_tokens: 4 } });
    const { base, run, of } = engineSetup();
    const d = mock.compose(stormlab({ ...base, maxAttempts: 2, targets: ['https://a.example', 'https://b.example'] }));
    const res = await run(postJson(d, 'https://a.example/v1/messages', { model: 'm', max_tokens: 5, messages: [] }));
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toEqual({ usage: { input_tokens: 3, output_tokens: 4 } });
    expect(of('retry').map((e) => e.class)).toEqual(['overloaded']);
    expect(of('fallback').map((e) => e.why)).toEqual(['attempts_exhausted']);
    await mock.close();
  });

  it('cuts a hanging attempt at attemptTimeoutMs and retries it', async () => {
    const s = await serve([{ hang: true }, { json: completion('ok') }]);
    const { base, clock, of } = engineSetup();
    // The clock is moved by hand: the second attempt's timer must not fire while its I/O is real.
    const pending = postJson(
      guarded({ ...base, targets: [s.origin], attemptTimeoutMs: 5000 }),
      `${s.origin}/v1/chat/completions`,
      chatBody(),
    );
    await until(() => s.requests.length === 1);
    clock.advance(5000);
    await until(() => of('retry').length === 1);
    clock.advance(1);
    const res = await pending;
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    expect(of('retry').map((e) => e.class)).toEqual(['timeout']);
    expect(s.requests).toHaveLength(2);
  });

  it('aborts through the caller signal while waiting to retry', async () => {
    const s = await serve([{ status: 503, headers: { 'retry-after': '60' } }]);
    const { base, run, of } = engineSetup();
    const ac = new AbortController();
    const d = guarded({ ...base, targets: [s.origin] });
    const pending = request(`${s.origin}/v1/chat/completions`, {
      dispatcher: d,
      method: 'POST',
      body: JSON.stringify(chatBody()),
      signal: ac.signal,
    });
    // The clock is not driven yet, so the guard stays in its 60 s backoff until the abort.
    await until(() => of('retry').length > 0);
    ac.abort();
    await expect(run(pending)).rejects.toMatchObject({ name: 'AbortError' });
    expect(s.requests).toHaveLength(1);
  });

  it('buffers a stream body to replay it, and sends one over the cap once, unguarded', async () => {
    const s = await serve([{ status: 503 }, { json: completion('ok') }]);
    const { base, run, events } = engineSetup();
    const text = JSON.stringify(chatBody());
    const d = guarded({ ...base, targets: [s.origin], maxBufferedRequestBytes: text.length });
    const send = (body: string) =>
      request(`${s.origin}/v1/chat/completions`, {
        dispatcher: d,
        method: 'POST',
        body: Readable.from([body.slice(0, 9), body.slice(9)]),
      });
    const res = await run(send(text));
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    expect(s.requests.map((r) => r.body)).toEqual([text, text]);
    const seen = events.length;
    const big = await run(send(`${text} `));
    expect(big.statusCode).toBe(200);
    await big.body.dump();
    expect(s.requests[2].body).toBe(`${text} `);
    expect(events.length).toBe(seen);
  });

  it('leaves requests to other origins alone', async () => {
    const s = await serve([{ status: 503 }]);
    const { base, run, events } = engineSetup();
    const res = await run(
      request(`${s.origin}/health`, { dispatcher: guarded({ ...base, targets: ['https://api.example.com'] }) }),
    );
    expect(res.statusCode).toBe(503);
    await res.body.dump();
    expect(events).toEqual([]);
  });
});
