import { describe, expect, it } from 'vitest';
import { fast, json, sseEvents, start } from './harness.js';

describe('fake upstream: model names and the request log', () => {
  it('serves any name with the first model and lists the names served in /v1/models', async () => {
    const h = await start({ models: [fast('primary'), fast('secondary')] });
    const r = await json(h.chat({ model: 'gpt-4o-mini' }));
    expect(r.model).toBe('gpt-4o-mini');
    expect(h.fu.stats().models.map((m) => m.attempts)).toEqual([1, 0]);
    const list = await json(fetch(`${h.url}/v1/models`));
    expect(list.data.map((m: any) => m.id)).toEqual(['primary', 'secondary', 'gpt-4o-mini']);
  });

  it('writes a model name past ASCII byte for byte in answers and streams, and an ASCII one as it is', async () => {
    const name = 'modèle-ü-雷';
    const h = await start({ models: [fast('primary')], aliases: { [name]: 'primary' } });
    const res = await h.chat({ model: name });
    expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(JSON.stringify(await json(res))));
    const stream = await (await h.chat({ model: name, stream: true })).text();
    const chunks = sseEvents(stream).filter((e) => e.data !== '[DONE]');
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.every((e) => JSON.parse(e.data).model === name)).toBe(true);
    const ascii = await (await h.chat({ model: 'primary', stream: true })).text();
    expect(
      sseEvents(ascii)
        .filter((e) => e.data !== '[DONE]')
        .every((e) => JSON.parse(e.data).model === 'primary'),
    ).toBe(true);
  });

  it('aliases send a name to its model; a bad alias is an OptionError at start', async () => {
    const h = await start({
      models: [fast('primary'), fast('secondary')],
      aliases: { 'claude-3-5-haiku-latest': 'secondary' },
    });
    await json(h.messages({ model: 'claude-3-5-haiku-latest' }));
    expect(h.fu.stats().models.map((m) => m.attempts)).toEqual([0, 1]);
    await expect(start({ models: [fast('a')], aliases: { x: 'nope' } })).rejects.toThrow('alias "x" points at "nope"');
  });

  it('logs each model request: route, model, the SDK retry header, status, fault and latency', async () => {
    const seen: unknown[] = [];
    const h = await start(
      {
        models: [fast(), fast('e')],
        faults: [{ kind: 'errors', fromMs: 0, toMs: null, rate: 1, status: 503, model: 'm' }],
      },
      { requestLog: (e) => seen.push(e) },
    );
    await h.chat({}, { headers: { 'content-type': 'application/json', 'x-stainless-retry-count': '2' } });
    await h.post('/v1/embeddings', { model: 'e', input: 'x' });
    const res = await fetch(`${h.url}/_stormlab/requests?limit=5`);
    const { requests } = await json(res);
    expect(requests).toEqual([
      expect.objectContaining({
        route: '/v1/chat/completions',
        method: 'POST',
        model: 'm',
        retryCount: 2,
        status: 503,
        fault: 'Fault',
        stream: false,
      }),
      expect.objectContaining({ route: '/v1/embeddings', model: 'e', retryCount: null, status: 200, fault: null }),
    ]);
    expect(requests[0].latencyMs).toBeGreaterThanOrEqual(0);
    expect(Date.parse(requests[0].time)).not.toBeNaN();
    expect(seen).toEqual(requests);
    expect(h.fu.requests(1)).toEqual([requests[1]]);
    await fetch(`${h.url}/_stormlab/reset`, { method: 'POST' });
    expect(h.fu.requests()).toEqual([]);
  });

  it('overload on the OpenAI route is a 503; the Anthropic route keeps 529', async () => {
    const h = await start({ models: [fast()], faults: [{ kind: 'errors', fromMs: 0, status: 529 }] });
    expect((await h.chat({})).status).toBe(503);
    expect((await h.post('/v1/responses', { model: 'm', input: 'x' })).status).toBe(503);
    expect((await h.messages({})).status).toBe(529);
  });
});
