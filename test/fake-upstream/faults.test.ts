import { describe, expect, it } from 'vitest';
import { causeCode, fast, json, readUntilBroken, sseEvents, start } from './harness.js';

const N = 40;

describe('fake upstream: fault phases', () => {
  it('errors: answers the share `rate` with statuses drawn from the weights, the rest 200', async () => {
    const h = await start({
      models: [fast()],
      faults: [{ kind: 'errors', fromMs: 0, rate: 0.5, status: { 500: 1, 503: 1 } }],
    });
    const statuses = await Promise.all(
      Array.from({ length: N }, () => h.chat({ max_tokens: 1 }).then(async (r) => (await r.arrayBuffer(), r.status))),
    );
    const seen = new Set(statuses);
    expect([...seen].sort()).toEqual([200, 500, 503]);
    const byStatus = h.fu.stats().models[0].byStatus;
    expect(byStatus[200] + byStatus[500] + byStatus[503]).toBe(N);
    expect(h.fu.stats().models[0].byDetail.Fault).toBe(byStatus[500] + byStatus[503]);
  });

  it("errors and outage: provider-shaped bodies, and the phase's retryAfterMs as retry-after headers", async () => {
    const h = await start({
      models: [fast('a'), fast('b')],
      faults: [
        { kind: 'outage', fromMs: 0, model: 'a', retryAfterMs: 2500 },
        { kind: 'errors', fromMs: 0, model: 'b', status: 502 },
      ],
    });
    const outage = await h.chat({ model: 'a' });
    expect(outage.status).toBe(503);
    expect(outage.headers.get('retry-after')).toBe('3');
    expect(outage.headers.get('retry-after-ms')).toBe('2500');
    expect((await json(outage)).error).toEqual({
      message: 'The engine is currently overloaded, please try again later.',
      type: 'server_error',
      param: null,
      code: null,
    });
    const error = await h.chat({ model: 'b' });
    expect(error.status).toBe(502);
    expect(error.headers.get('retry-after')).toBeNull();
    expect((await json(error)).error.type).toBe('server_error');
    const anthropic = await h.messages({ model: 'a' });
    expect(anthropic.status).toBe(503);
    expect(anthropic.headers.get('retry-after')).toBe('3');
    expect(await json(anthropic)).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
    });
  });

  it('reset: the connection is reset without an HTTP answer', async () => {
    const h = await start({ models: [fast()], faults: [{ kind: 'reset', fromMs: 0 }] });
    const err = await h.chat({}).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TypeError);
    expect(['ECONNRESET', 'UND_ERR_SOCKET']).toContain(causeCode(err));
    expect(h.fu.stats().models[0]).toMatchObject({ attempts: 1, byStatus: { 0: 1 }, byDetail: { Reset: 1 } });
  });

  it('hang: never answers; a client that gives up is a cancel at the model', async () => {
    const h = await start({ models: [fast()], faults: [{ kind: 'hang', fromMs: 0 }] });
    const ctrl = new AbortController();
    const pending = h.chat({}, { signal: ctrl.signal });
    await h.waitFor('submitted');
    ctrl.abort();
    await expect(pending).rejects.toThrow(/abort/i);
    await h.waitFor('cancelled');
    const s = h.fu.stats();
    expect(s.models[0]).toMatchObject({ attempts: 1, cancelled: 1, byStatus: {}, busy: 0 });
    expect(s.http.clientClosed).toBe(1);
    expect(s.inFlight).toBe(0);
  });

  it('midstream, not streamed: a 200 whose body breaks off', async () => {
    const h = await start({ models: [fast()], faults: [{ kind: 'midstream', fromMs: 0 }] });
    const res = await h.chat({ max_tokens: 50 });
    expect(res.status).toBe(200);
    const { text, error } = await readUntilBroken(res);
    expect(error).toBeDefined();
    expect(text.startsWith('{"id":"chatcmpl-')).toBe(true);
    expect(() => JSON.parse(text)).toThrow();
    expect(h.fu.stats().models[0].byDetail).toEqual({ MidStream: 1 });
  });

  it('midstream, streamed (OpenAI): chunks, then an error data line, then the socket ends abruptly', async () => {
    const h = await start({ models: [fast()], faults: [{ kind: 'midstream', fromMs: 0 }] });
    const res = await h.chat({ max_tokens: 50, stream: true });
    expect(res.status).toBe(200);
    const { text, error } = await readUntilBroken(res);
    expect(error).toBeDefined();
    const events = sseEvents(text).map((e) => JSON.parse(e.data));
    expect(events[0].object).toBe('chat.completion.chunk');
    expect(events.at(-1)).toEqual({
      error: {
        message: 'The server had an error while processing your request. Sorry about that!',
        type: 'server_error',
        param: null,
        code: null,
      },
    });
    expect(text).not.toContain('[DONE]');
  });

  it('midstream, streamed (Anthropic): an error event after the 200', async () => {
    const h = await start({ models: [fast()], faults: [{ kind: 'midstream', fromMs: 0 }] });
    const res = await h.messages({ max_tokens: 50, stream: true });
    expect(res.status).toBe(200);
    const { text, error } = await readUntilBroken(res);
    expect(error).toBeDefined();
    const events = sseEvents(text);
    expect(events[0].event).toBe('message_start');
    expect(events.at(-1)).toEqual({
      event: 'error',
      data: JSON.stringify({ type: 'error', error: { type: 'api_error', message: 'Internal server error' } }),
    });
    expect(events.map((e) => e.event)).not.toContain('message_stop');
  });

  it('quota: 429 insufficient_quota (billing_error for Anthropic), no retry hint', async () => {
    const h = await start({ models: [fast()], faults: [{ kind: 'quota', fromMs: 0 }] });
    const res = await h.chat({});
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBeNull();
    expect((await json(res)).error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' });
    const anthropic = await h.messages({});
    expect(anthropic.status).toBe(429);
    expect((await json(anthropic)).error.type).toBe('billing_error');
    expect(h.fu.stats().models[0].byDetail).toEqual({ InsufficientQuota: 2 });
  });

  it('shed: a 1-slot model with no queue answers overload while its slot is busy: 503 on the OpenAI route (the model counts its 529)', async () => {
    const h = await start({ models: [{ name: 'm', slots: 1, queue: 0, ttftMs: 60_000, tpotMs: 0 }] });
    const ctrl = new AbortController();
    const first = h.chat({}, { signal: ctrl.signal });
    await h.waitFor('submitted');
    const res = await h.chat({});
    expect(res.status).toBe(503);
    expect((await json(res)).error).toEqual({
      message: 'The engine is currently overloaded, please try again later.',
      type: 'server_error',
      param: null,
      code: null,
    });
    expect(h.fu.stats().models[0]).toMatchObject({
      busy: 1,
      queued: 0,
      byStatus: { 529: 1 },
      byDetail: { Overloaded: 1 },
    });
    ctrl.abort();
    await expect(first).rejects.toThrow();
  });

  it('RPM: 429 rate_limit_exceeded with retry-after, retry-after-ms and x-ratelimit-* headers', async () => {
    const h = await start({ models: [fast('m', { rpm: 1 })] });
    expect((await h.chat({})).status).toBe(200);
    const res = await h.chat({});
    expect(res.status).toBe(429);
    const ms = Number(res.headers.get('retry-after-ms'));
    expect(ms).toBeGreaterThan(59_000);
    expect(ms).toBeLessThanOrEqual(60_000);
    expect(res.headers.get('retry-after')).toBe('60');
    expect(res.headers.get('x-ratelimit-limit-requests')).toBe('1');
    expect(res.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(res.headers.get('x-ratelimit-reset-requests')).toMatch(/^(59(\.\d+)?s|1m0s)$/);
    const error = (await json(res)).error;
    expect(error).toMatchObject({ type: 'requests', code: 'rate_limit_exceeded' });
    expect(error.message).toMatch(/^Rate limit reached on requests per min \(RPM\)\. Please try again in 59\.\d+s\.$/);
    expect(h.fu.stats().models[0].byDetail).toEqual({ None: 1, RateLimitRequests: 1 });
  });

  it('TPM: 429 with the tokens type and x-ratelimit-remaining-tokens', async () => {
    const h = await start({ models: [fast('m', { tpm: 100 })] });
    expect((await h.chat({ max_tokens: 60 })).status).toBe(200);
    const res = await h.chat({ max_tokens: 60 });
    expect(res.status).toBe(429);
    expect(res.headers.get('x-ratelimit-remaining-tokens')).toBe('25');
    expect((await json(res)).error).toMatchObject({ type: 'tokens', code: 'rate_limit_exceeded' });
  });

  it('phases only hit while active and only their model', async () => {
    const h = await start({
      models: [fast('a'), fast('b')],
      faults: [
        { kind: 'outage', fromMs: 0, model: 'a' },
        { kind: 'outage', fromMs: 3_600_000, toMs: 7_200_000 },
      ],
    });
    expect((await h.chat({ model: 'a' })).status).toBe(503);
    expect((await h.chat({ model: 'b' })).status).toBe(200);
  });
});
