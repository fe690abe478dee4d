import OpenAI from 'openai';
import { Agent, fetch as undiciFetch } from 'undici';
import { describe, expect, it } from 'vitest';
import { guardedFetch, ShedError, stormlab } from 'stormlab/undici';
import { completion, engineSetup, useScriptedServers, type Reply } from './scripted-server.js';

const serve = useScriptedServers();

const rateLimited: Reply = {
  status: 429,
  headers: { 'retry-after-ms': '1200', 'x-ratelimit-remaining-requests': '0' },
  json: {
    error: { message: 'Rate limit reached for requests', type: 'requests', param: null, code: 'rate_limit_exceeded' },
  },
};

const ask = (client: OpenAI) =>
  client.chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'Capital of France?' }],
    max_tokens: 20,
  });

describe('the openai SDK through the engine', () => {
  it('guardedFetch retries the 429 (retry-after-ms honoured); the SDK itself does not retry', async () => {
    const s = await serve([rateLimited, { json: completion('Paris.') }]);
    const { base, run, of } = engineSetup();
    const client = new OpenAI({
      apiKey: 'test',
      baseURL: `${s.origin}/v1`,
      maxRetries: 0,
      fetch: guardedFetch({ ...base, targets: [s.origin] }),
    });
    const answer = await run(ask(client));
    expect(answer.choices[0].message.content).toBe('Paris.');
    expect(s.requests).toHaveLength(2);
    expect(s.requests.map((r) => r.headers['x-stainless-retry-count'])).toEqual(['0', '0']);
    expect(of('retry')).toEqual([expect.objectContaining({ class: 'rate_limited', delayMs: 1200 })]);
  });

  it('without the engine and with maxRetries 0 the same 429 fails', async () => {
    const s = await serve([rateLimited, { json: completion('Paris.') }]);
    const client = new OpenAI({ apiKey: 'test', baseURL: `${s.origin}/v1`, maxRetries: 0 });
    await expect(ask(client)).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    expect(s.requests).toHaveLength(1);
  });

  it('a final error answer reaches the SDK as its own APIError', async () => {
    const s = await serve([
      {
        status: 401,
        json: { error: { message: 'Incorrect API key', type: 'invalid_request_error', code: 'invalid_api_key' } },
      },
    ]);
    const { base, run } = engineSetup();
    const client = new OpenAI({
      apiKey: 'bad',
      baseURL: `${s.origin}/v1`,
      maxRetries: 0,
      fetch: guardedFetch({ ...base, targets: [s.origin] }),
    });
    await expect(run(ask(client))).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    expect(s.requests).toHaveLength(1);
  });

  it('a local shed reaches the SDK as a 429 it does not retry (x-should-retry: false), not a connection error', async () => {
    const s = await serve([{ json: completion('Paris.') }]);
    const { base, run } = engineSetup();
    const limits = [{ name: 'rps', unit: 'requests' as const, rate: 1, per: 'second' as const }];
    const client = new OpenAI({
      apiKey: 'test',
      baseURL: `${s.origin}/v1`,
      maxRetries: 2, // left on: the synthetic answer tells it not to retry
      fetch: guardedFetch({ ...base, targets: [s.origin], limits }),
    });
    await run(ask(client));
    const err = await run(ask(client)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err).toMatchObject({ status: 429, code: 'limit', type: 'stormlab_shed' });
    expect((err as Error).cause).toBeUndefined();
    expect(s.requests).toHaveLength(1);
  });

  it('with shedAnswers: false the shed is a ShedError without an internal cause', async () => {
    const s = await serve([{ json: completion('Paris.') }]);
    const { base, run } = engineSetup();
    const limits = [{ name: 'rps', unit: 'requests' as const, rate: 1, per: 'second' as const }];
    const client = new OpenAI({
      apiKey: 'test',
      baseURL: `${s.origin}/v1`,
      maxRetries: 0,
      fetch: guardedFetch({ ...base, targets: [s.origin], limits, shedAnswers: false }),
    });
    await run(ask(client));
    const err = await run(ask(client)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIConnectionError);
    expect((err as Error).cause).toBeInstanceOf(ShedError);
    expect(((err as Error).cause as Error).cause).toBeUndefined();
  });

  it('the undici interceptor guards the SDK too (stream request bodies are buffered for replay)', async () => {
    const s = await serve([rateLimited, { json: completion('Paris.') }]);
    const { base, run, of } = engineSetup();
    const agent = new Agent();
    const dispatcher = agent.compose(stormlab({ ...base, targets: [s.origin] }));
    const client = new OpenAI({
      apiKey: 'test',
      baseURL: `${s.origin}/v1`,
      maxRetries: 0,
      fetch: undiciFetch as unknown as typeof fetch,
      fetchOptions: { dispatcher } as object,
    });
    const answer = await run(ask(client));
    expect(answer.choices[0].message.content).toBe('Paris.');
    expect(s.requests).toHaveLength(2);
    expect(s.requests[1].body).toBe(s.requests[0].body);
    expect(of('retry')).toEqual([expect.objectContaining({ delayMs: 1200 })]);
    await agent.close();
  });

  it.each([
    ['limit', 429, OpenAI.RateLimitError],
    ['breaker', 503, OpenAI.InternalServerError],
  ] as const)(
    'a local shed (%s) through the interceptor reaches the SDK as guardedFetch’s does: a %i it does not retry',
    async (reason, status, kind) => {
      const s = await serve(reason === 'limit' ? [{ json: completion('Paris.') }] : [{ status: 503 }]);
      const { base, run } = engineSetup();
      const limits = [{ name: 'rps', unit: 'requests' as const, rate: 1, per: 'second' as const }];
      const options =
        reason === 'limit'
          ? { ...base, targets: [s.origin], limits }
          : { ...base, targets: [s.origin], maxAttempts: 1, breaker: { minimumCalls: 1, failureRatio: 0.5 } };
      const agent = new Agent();
      const dispatcher = agent.compose(stormlab(options));
      const client = new OpenAI({
        apiKey: 'test',
        baseURL: `${s.origin}/v1`,
        maxRetries: 2, // left on: the synthetic answer tells it not to retry
        fetch: undiciFetch as unknown as typeof fetch,
        fetchOptions: { dispatcher } as object,
      });
      await run(ask(client)).catch(() => undefined);
      const before = s.requests.length;
      const err = await run(ask(client)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(kind);
      expect(err).toMatchObject({ status, code: reason, type: 'stormlab_shed' });
      expect(s.requests).toHaveLength(before);
      const headers = (err as InstanceType<typeof OpenAI.APIError>).headers!;
      expect(headers.get('x-should-retry')).toBe('false');
      expect(headers.get('x-stormlab-shed')).toBe(reason);
      expect(headers.get('retry-after-ms')).toMatch(/^\d+$/);
      await agent.close();
    },
  );
});
