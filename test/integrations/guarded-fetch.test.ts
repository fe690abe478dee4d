import { describe, expect, it } from 'vitest';
import { ShedError } from '../../src/engine/errors.js';
import { estimateChatTokens } from '../../src/engine/token-estimator.js';
import { guardedFetch } from '../../src/integrations/guarded-fetch.js';
import { chatBody, completion, engineSetup, openaiError, useScriptedServers, until } from './scripted-server.js';

const serve = useScriptedServers();

const post = (body: unknown) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

describe('guardedFetch', () => {
  it('passes a success through with its body intact', async () => {
    const s = await serve([{ json: completion('Paris.') }]);
    const { base, run, of } = engineSetup();
    const f = guardedFetch({ ...base, targets: [s.origin] });
    const res = await run(f(`${s.origin}/v1/chat/completions?x=1`, post(chatBody())));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(completion('Paris.'));
    expect(s.requests).toHaveLength(1);
    expect(s.requests[0]).toMatchObject({ method: 'POST', url: '/v1/chat/completions?x=1' });
    expect(JSON.parse(s.requests[0].body)).toEqual(chatBody());
    expect(of('attempt')).toHaveLength(1);
  });

  it('retries a 503 and answers with the 200', async () => {
    const s = await serve([
      { status: 503, json: { error: { message: 'busy', type: 'server_error' } } },
      { json: completion('ok') },
    ]);
    const { base, run, of } = engineSetup();
    const res = await run(
      guardedFetch({ ...base, targets: [s.origin] })(`${s.origin}/v1/chat/completions`, post(chatBody())),
    );
    expect(res.status).toBe(200);
    expect(((await res.json()) as ReturnType<typeof completion>).choices[0].message.content).toBe('ok');
    expect(s.requests).toHaveLength(2);
    expect(s.requests[1].body).toBe(s.requests[0].body);
    expect(of('retry').map((e) => e.class)).toEqual(['server_error']);
  });

  it('honours retry-after-ms on a 429 as the lower bound of the wait', async () => {
    const s = await serve([
      {
        ...openaiError(429, 'requests', 'rate_limit_exceeded', 'Rate limit reached'),
        headers: { 'retry-after-ms': '1500' },
      },
      { json: completion('ok') },
    ]);
    const { base, run, of, clock } = engineSetup();
    const start = clock.now();
    const res = await run(
      guardedFetch({ ...base, targets: [s.origin] })(`${s.origin}/v1/chat/completions`, post(chatBody())),
    );
    expect(res.status).toBe(200);
    expect(of('retry')).toEqual([expect.objectContaining({ class: 'rate_limited', delayMs: 1500 })]);
    expect(clock.now() - start).toBe(1500);
  });

  it('does not retry a 400 and returns it as it is', async () => {
    const bad = openaiError(400, 'invalid_request_error', 'invalid_value', "Invalid value for 'temperature'");
    const s = await serve([bad, { json: completion('never') }]);
    const { base, run, of } = engineSetup();
    const res = await run(
      guardedFetch({ ...base, targets: [s.origin] })(`${s.origin}/v1/chat/completions`, post(chatBody())),
    );
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(bad.json);
    expect(s.requests).toHaveLength(1);
    expect(of('retry')).toEqual([]);
  });

  it('falls back to the second origin on insufficient_quota', async () => {
    const a = await serve([
      openaiError(429, 'insufficient_quota', 'insufficient_quota', 'You exceeded your current quota'),
    ]);
    const b = await serve([{ json: completion('from b') }]);
    const { base, run, of } = engineSetup();
    const f = guardedFetch({ ...base, targets: [a.origin, b.origin] });
    const res = await run(f(`${a.origin}/v1/chat/completions`, post(chatBody())));
    expect(((await res.json()) as ReturnType<typeof completion>).choices[0].message.content).toBe('from b');
    expect([a.requests.length, b.requests.length]).toEqual([1, 1]);
    expect(b.requests[0].url).toBe('/v1/chat/completions');
    expect(of('fallback')).toEqual([expect.objectContaining({ from: a.origin, to: b.origin, why: 'quota_exhausted' })]);
  });

  it('falls back to the second origin on context_length_exceeded', async () => {
    const a = await serve([
      openaiError(
        400,
        'invalid_request_error',
        'context_length_exceeded',
        "This model's maximum context length is 8192 tokens",
      ),
    ]);
    const b = await serve([{ json: completion('long context') }]);
    const { base, run, of } = engineSetup();
    const res = await run(
      guardedFetch({ ...base, targets: [a.origin, b.origin] })(`${a.origin}/v1/chat/completions`, post(chatBody())),
    );
    expect(res.status).toBe(200);
    expect(of('fallback')).toEqual([expect.objectContaining({ why: 'context_length' })]);
  });

  it('hands a 200 that is a refusal (finish_reason content_filter, stop_reason refusal) back as it is, never retried or failed over', async () => {
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
        guardedFetch({ ...base, targets: [a.origin, b.origin] })(`${a.origin}/v1/chat/completions`, post(chatBody())),
      );
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual(refusal);
      expect([a.requests.length, b.requests.length]).toEqual([1, 0]);
      expect(of('retry')).toEqual([]);
      expect(of('fallback')).toEqual([]);
    }
  });

  it("fails a 200 refusal over with onContentFilter: 'fallback'", async () => {
    const a = await serve([
      {
        json: {
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-5',
          content: [],
          stop_reason: 'refusal',
          stop_details: { type: 'refusal', explanation: 'Declined.' },
        },
      },
    ]);
    const b = await serve([{ json: completion('from b') }]);
    const { base, run, of } = engineSetup();
    const f = guardedFetch({ ...base, targets: [a.origin, b.origin], onContentFilter: 'fallback' });
    const res = await run(f(`${a.origin}/v1/chat/completions`, post(chatBody())));
    expect(((await res.json()) as ReturnType<typeof completion>).choices[0].message.content).toBe('from b');
    expect(of('fallback')).toEqual([expect.objectContaining({ why: 'content_filter' })]);
  });

  it('answers a spent retry budget with a synthetic 503 naming the reason', async () => {
    const s = await serve([{ status: 503 }]);
    const { base, run } = engineSetup();
    const f = guardedFetch({ ...base, targets: [s.origin], retryBudget: { ratio: 0, minRetriesPerSec: 0 } });
    const res = await run(f(`${s.origin}/v1/chat/completions`, post(chatBody())));
    expect(res.status).toBe(503);
    expect(res.headers.get('x-should-retry')).toBe('false');
    expect(res.headers.get('x-stormlab-shed')).toBe('budget');
    expect(await res.json()).toEqual({
      error: { message: 'shed locally: budget', type: 'stormlab_shed', param: null, code: 'budget' },
    });
    expect(s.requests).toHaveLength(1);
  });

  it('with shedAnswers: false, rejects with a ShedError that carries no internal cause', async () => {
    const s = await serve([{ status: 503 }]);
    const { base, run } = engineSetup();
    const f = guardedFetch({
      ...base,
      targets: [s.origin],
      retryBudget: { ratio: 0, minRetriesPerSec: 0 },
      shedAnswers: false,
    });
    const err = await run(f(`${s.origin}/v1/chat/completions`, post(chatBody()))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ShedError);
    expect(err).toMatchObject({ reason: 'budget', code: 'ERR_STORMLAB_SHED' });
    expect((err as Error).cause).toBeUndefined();
  });

  it('reserves the request estimate and reconciles it from usage.total_tokens', async () => {
    const s = await serve([{ json: completion('ok', { prompt_tokens: 30, completion_tokens: 7, total_tokens: 37 }) }]);
    const { base, run, of } = engineSetup();
    const limits = [{ name: 'tpm', unit: 'tokens' as const, rate: 100_000, per: 'minute' as const }];
    const body = chatBody({ max_tokens: 64 });
    const res = await run(
      guardedFetch({ ...base, targets: [s.origin], limits })(`${s.origin}/v1/chat/completions`, post(body)),
    );
    await res.text();
    const estimate = estimateChatTokens(body);
    expect(of('reserve')).toEqual([expect.objectContaining({ tokens: estimate })]);
    expect(of('reconcile')).toEqual([expect.objectContaining({ reserved: estimate, actual: 37 })]);
  });

  it('reconciles Anthropic usage as input_tokens + output_tokens', async () => {
    const s = await serve([
      {
        json: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          content: [{ type: 'text', text: 'hi' }],
          usage: { input_tokens: 12, output_tokens: 4 },
        },
      },
    ]);
    const { base, run, of } = engineSetup();
    const limits = [{ name: 'tpm', unit: 'tokens' as const, rate: 100_000, per: 'minute' as const }];
    const body = {
      model: 'claude-x',
      max_tokens: 100,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'hello' }],
    };
    await run(guardedFetch({ ...base, limits })(`${s.origin}/v1/messages`, post(body)));
    expect(of('reconcile')).toEqual([expect.objectContaining({ reserved: estimateChatTokens(body), actual: 16 })]);
  });

  it('keys buckets by a header and by the body model', async () => {
    const s = await serve([{ json: completion('ok') }]);
    const { base, run, of } = engineSetup();
    const limits = [
      { name: 'tenant_rps', unit: 'requests' as const, rate: 1, per: 'second' as const, keyBy: 'tenant' },
    ];
    const f = guardedFetch({ ...base, limits, keys: (r) => ({ tenant: r.header('x-tenant') ?? 'anon' }) });
    const send = (tenant: string) =>
      f(`${s.origin}/v1/chat/completions`, { ...post(chatBody()), headers: { 'x-tenant': tenant } });
    await run(send('acme'));
    await run(send('globex'));
    const refused = await run(send('acme'));
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after-ms')).toBe('1000');
    expect(refused.headers.get('x-stormlab-shed')).toBe('limit');
    expect(s.requests).toHaveLength(2);
    expect(of('shed')).toHaveLength(1);
  });

  it('passes a stream through and reconciles from its final usage chunk', async () => {
    const chunk = (content: string) => ({
      id: 'c',
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta: { content } }],
      usage: null,
    });
    const usage = {
      id: 'c',
      object: 'chat.completion.chunk',
      choices: [],
      usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 },
    };
    const s = await serve([{ status: 503 }, { sse: [chunk('Par'), chunk('is.'), usage, '[DONE]'] }]);
    const { base, run, of } = engineSetup();
    const limits = [{ name: 'tpm', unit: 'tokens' as const, rate: 100_000, per: 'minute' as const }];
    const f = guardedFetch({ ...base, targets: [s.origin], limits });
    const res = await run(
      f(`${s.origin}/v1/chat/completions`, post(chatBody({ stream: true, stream_options: { include_usage: true } }))),
    );
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const text = await run(res.text());
    expect(text).toContain('"Par"');
    expect(text).toContain('data: [DONE]');
    expect(s.requests).toHaveLength(2);
    await run(Promise.resolve());
    expect(of('reconcile').map((e) => e.actual)).toEqual([0, 11]);
  });

  it('does not retry a stream that breaks after its first token; the caller gets an in-band error', async () => {
    const s = await serve([
      { sse: [{ choices: [{ delta: { content: 'Par' } }] }], cut: true },
      { json: completion('never') },
    ]);
    const { base, run, of } = engineSetup();
    const res = await run(
      guardedFetch({ ...base, targets: [s.origin] })(
        `${s.origin}/v1/chat/completions`,
        post(chatBody({ stream: true })),
      ),
    );
    expect(res.status).toBe(200);
    const text = await run(res.text());
    expect(text).toContain('"Par"');
    expect(text).toMatch(
      /data: \{"error":\{"message":"stormlab: [^"]+","type":"server_error","param":null,"code":"stream_cut"\}\}\n\n$/,
    );
    expect(s.requests).toHaveLength(1);
    expect(of('retry')).toEqual([]);
  });

  it('cuts a hanging attempt at attemptTimeoutMs and retries it', async () => {
    const s = await serve([{ hang: true }, { json: completion('ok') }]);
    const { base, clock, of } = engineSetup();
    // The clock is moved by hand: the second attempt's timer must not fire while its I/O is real.
    const pending = guardedFetch({ ...base, targets: [s.origin], attemptTimeoutMs: 5000 })(
      `${s.origin}/v1/chat/completions`,
      post(chatBody()),
    );
    await until(() => s.requests.length === 1);
    clock.advance(5000);
    await until(() => of('retry').length === 1);
    clock.advance(1);
    const res = await pending;
    expect(res.status).toBe(200);
    expect(of('retry').map((e) => e.class)).toEqual(['timeout']);
    expect(s.requests).toHaveLength(2);
  });

  it('retries a connection reset', async () => {
    const s = await serve([{ reset: true }, { json: completion('ok') }]);
    const { base, run, of } = engineSetup();
    const res = await run(
      guardedFetch({ ...base, targets: [s.origin] })(`${s.origin}/v1/chat/completions`, post(chatBody())),
    );
    expect(res.status).toBe(200);
    expect(of('retry').map((e) => e.class)).toEqual(['connection']);
  });

  it('sends nothing for a caller signal that is already aborted', async () => {
    const s = await serve([{ json: completion('ok') }]);
    const { base, run } = engineSetup();
    const ac = new AbortController();
    ac.abort();
    const f = guardedFetch({ ...base, targets: [s.origin] });
    await expect(
      run(f(`${s.origin}/v1/chat/completions`, { ...post(chatBody()), signal: ac.signal })),
    ).rejects.toMatchObject({ name: 'AbortError' });
    expect(s.requests).toHaveLength(0);
  });

  it('leaves requests to other origins alone', async () => {
    const s = await serve([{ status: 503 }]);
    const { base, run, events } = engineSetup();
    const f = guardedFetch({ ...base, targets: ['https://api.example.com'] });
    const res = await run(f(`${s.origin}/health`));
    expect(res.status).toBe(503);
    expect(events).toEqual([]);
  });

  it('refuses a target that is not an origin', () => {
    expect(() => guardedFetch({ targets: ['https://api.example.com/v1'] })).toThrow(/targets\[0\] must be an origin/);
  });
});
