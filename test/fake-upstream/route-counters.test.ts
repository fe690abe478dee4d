import { describe, expect, it } from 'vitest';
import { RouteCounters, type RouteStats } from '../../src/fake-upstream/fake-upstream-stats.js';
import { fast, json, length, start } from './harness.js';

const stats = (url: string) => json(fetch(`${url}/_stormlab/stats`));
const route = (s: { routes: RouteStats[] }, name: string) => s.routes.find((r) => r.route === name);
const sum = (status: Record<string, number>) => Object.values(status).reduce((a, b) => a + b, 0);

describe('RouteCounters', () => {
  it('counts each request once, by what went out, and knows when the routes went quiet', () => {
    let now = 0;
    const c = new RouteCounters(() => now);
    expect(c.lastActivityMs).toBeNull();
    const a = c.opened('/v1/chat/completions', true);
    now = 5;
    const b = c.opened('/v1/chat/completions', false);
    const m = c.opened('/v1/messages', true);
    expect(c.inFlight).toBe(3);
    now = 9;
    c.closed(a, 200);
    c.closed(b, 'reset');
    c.closed(m, 529);
    expect(c.inFlight).toBe(0);
    expect(c.lastActivityMs).toBe(9);
    expect(c.routes()).toEqual([
      { route: '/v1/chat/completions', requests: 2, inFlight: 0, status: { 200: 1, reset: 1 }, noLengthHeader: 1 },
      { route: '/v1/messages', requests: 1, inFlight: 0, status: { 529: 1 }, noLengthHeader: 0 },
    ]);
  });

  it('a reset keeps open requests as received after it, so statuses still add up once quiet', () => {
    const c = new RouteCounters(() => 0);
    const done = c.opened('/v1/chat/completions', true);
    const open = c.opened('/v1/chat/completions', true);
    c.closed(done, 200);
    c.reset();
    expect(c.routes()[0]).toMatchObject({ requests: 1, inFlight: 1, status: {} });
    c.closed(open, 'cancelled');
    expect(c.routes()[0]).toMatchObject({ requests: 1, inFlight: 0, status: { cancelled: 1 } });
  });

  it('past 64 distinct paths the rest share one row: the counters stay bounded', () => {
    const c = new RouteCounters(() => 0);
    for (let i = 0; i < 100; i++) c.closed(c.opened(`/v1/unknown-${i}`, true), 404);
    const rows = c.routes();
    expect(rows).toHaveLength(64);
    expect(rows.at(-1)).toMatchObject({ route: '(other)', requests: 37, status: { 404: 37 } });
    expect(rows.reduce((n, r) => n + r.requests, 0)).toBe(100);
  });
});

describe('GET /_stormlab/stats: routes as the wire saw them', () => {
  it('an overload goes out as 503 on the OpenAI route and 529 on the Anthropic one; the model counts 529 for both', async () => {
    const h = await start({ models: [{ name: 'm', slots: 1, queue: 0, ttftMs: 60_000, tpotMs: 0 }] });
    const ctrl = new AbortController();
    const busy = h.chat({}, { signal: ctrl.signal });
    await h.waitFor('submitted');
    expect((await h.chat({})).status).toBe(503);
    expect((await h.messages({})).status).toBe(529);
    ctrl.abort();
    await expect(busy).rejects.toThrow();
    await h.waitFor('cancelled');
    const s = await stats(h.url);
    expect(s.models[0].byStatus).toEqual({ 529: 2 });
    expect(route(s, '/v1/chat/completions')).toEqual({
      route: '/v1/chat/completions',
      requests: 2,
      inFlight: 0,
      status: { 503: 1, cancelled: 1 },
      noLengthHeader: 2,
    });
    expect(route(s, '/v1/messages')).toMatchObject({ requests: 1, status: { 529: 1 } });
    expect(s.inFlight).toBe(0);
  });

  it('counts what the model never saw (bad bodies, unknown paths) and what got no answer (resets, clients that left)', async () => {
    const h = await start({ models: [fast()] });
    expect((await h.chat({ messages: 'nope' })).status).toBe(400);
    expect((await h.post('/v1/nowhere', {})).status).toBe(404);
    expect((await fetch(`${h.url}/v1/models`)).status).toBe(200); // a listing, not a model request
    expect((await h.chat({}, length('max'))).status).toBe(200);
    const s = await stats(h.url);
    expect(route(s, '/v1/chat/completions')).toMatchObject({ requests: 2, status: { 200: 1, 400: 1 } });
    expect(route(s, '/v1/chat/completions')!.noLengthHeader).toBe(1);
    expect(route(s, '/v1/nowhere')).toMatchObject({ requests: 1, status: { 404: 1 } });
    expect(route(s, '/v1/models')).toBeUndefined();
    expect(s.lastActivityMs).toBeGreaterThan(0);
    expect(s.lastActivityMs).toBeLessThanOrEqual(s.nowMs);
  });

  it('a reset connection is "reset" and a client that leaves first is "cancelled"; in flight until then', async () => {
    const h = await start({
      models: [fast(), fast('hung')],
      faults: [
        { kind: 'reset', fromMs: 0, model: 'm' },
        { kind: 'hang', fromMs: 0, model: 'hung' },
      ],
    });
    await expect(h.chat({})).rejects.toThrow();
    const ctrl = new AbortController();
    const hung = h.chat({ model: 'hung' }, { signal: ctrl.signal });
    await h.waitFor('submitted', 2);
    const during = await stats(h.url);
    expect(during.inFlight).toBe(1);
    expect(route(during, '/v1/chat/completions')).toMatchObject({ requests: 2, inFlight: 1, status: { reset: 1 } });
    ctrl.abort();
    await expect(hung).rejects.toThrow();
    await h.waitFor('cancelled');
    const after = await stats(h.url);
    expect(after.inFlight).toBe(0);
    const chat = route(after, '/v1/chat/completions')!;
    expect(chat.status).toEqual({ reset: 1, cancelled: 1 });
    expect(sum(chat.status)).toBe(chat.requests);
  });

  it('POST /_stormlab/reset zeroes the route counters too', async () => {
    const h = await start({ models: [fast()] });
    await h.chat({});
    await h.post('/_stormlab/reset', {});
    expect(route(await stats(h.url), '/v1/chat/completions')).toMatchObject({ requests: 0, status: {} });
  });

  it('/metrics has the statuses per route', async () => {
    const h = await start({ models: [fast()] });
    await h.chat({});
    const text = await (await fetch(`${h.url}/metrics`)).text();
    expect(text).toContain('stormlab_http_route_responses_total{route="/v1/chat/completions",status="200"} 1');
  });
});

describe('/_stormlab/output-tokens: answers to requests that come without the length header', () => {
  const put = (url: string, body: unknown) =>
    fetch(`${url}/_stormlab/output-tokens`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const completion = async (res: Response) => (await json(res)).usage.completion_tokens;

  it('runs their natural length by default; "max" makes them max_tokens long, as the header would; null undoes it', async () => {
    const h = await start({ models: [fast('m', { answerTokens: 3 })] });
    expect(await json(fetch(`${h.url}/_stormlab/output-tokens`))).toEqual({
      header: 'x-stormlab-output-tokens',
      withoutHeader: null,
    });
    expect(await completion(await h.chat({ max_tokens: 40 }))).toBe(3);
    expect(await json(put(h.url, { withoutHeader: 'max' }))).toMatchObject({ withoutHeader: 'max' });
    expect(await completion(await h.chat({ max_tokens: 40 }))).toBe(40);
    // A request that sends the header still gets what it asks for.
    expect(await completion(await h.chat({ max_tokens: 40 }, length(7)))).toBe(7);
    expect((await put(h.url, { withoutHeader: 12 })).status).toBe(200);
    expect(await completion(await h.chat({ max_tokens: 40 }))).toBe(12);
    expect((await put(h.url, { withoutHeader: null })).status).toBe(200);
    expect(await completion(await h.chat({ max_tokens: 40 }))).toBe(3);
  });

  it.each([
    [{ withoutHeader: 0 }, 'withoutHeader must be "max", a whole number of tokens >= 1 or null, got 0'],
    [{ withoutHeader: 'min' }, 'withoutHeader must be "max", a whole number of tokens >= 1 or null, got "min"'],
    [{ tokens: 'max' }, 'expected {"withoutHeader": "max" | tokens | null}, got an unknown field "tokens"'],
    [[], 'expected {"withoutHeader": "max" | tokens | null}'],
  ])('%j is a 400 naming the field, and nothing changes', async (body, message) => {
    const h = await start({ models: [fast()] });
    const res = await put(h.url, body);
    expect(res.status).toBe(400);
    expect((await json(res)).error).toMatchObject({ message, param: 'withoutHeader' });
    expect((await json(fetch(`${h.url}/_stormlab/output-tokens`))).withoutHeader).toBeNull();
  });
});
