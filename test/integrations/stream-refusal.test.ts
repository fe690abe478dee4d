import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { guardedFetch } from '../../src/integrations/guarded-fetch.js';
import {
  anthropicEvent,
  anthropicStart,
  anthropicText,
  delta,
  engineSetup,
  openaiStream,
  roleChunk,
  postJson,
  useGuardedAgents,
  useScriptedServers,
} from './scripted-server.js';

const serve = useScriptedServers();
const guarded = useGuardedAgents();

const ask = { model: 'gpt-4o', messages: [{ role: 'user' as const, content: 'Say something you must not.' }] };
const models = [
  { name: 'primary', model: 'gpt-4o' },
  { name: 'mini', model: 'gpt-4o-mini' },
];

/** An OpenAI stream the content filter ends, before any token or after `text`. */
const filtered = (text = ''): unknown[] => [
  roleChunk,
  ...(text === '' ? [] : [delta(text)]),
  delta('', 'content_filter'),
  '[DONE]',
];

/** An Anthropic stream that ends in a refusal, with the provider's explanation. */
const refused = (): string[] => [
  ...anthropicStart(),
  anthropicEvent('message_delta', {
    delta: { stop_reason: 'refusal', stop_sequence: null, stop_details: { explanation: 'Declined by policy.' } },
    usage: { output_tokens: 0 },
  }),
  anthropicEvent('message_stop'),
];

async function chunks(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>) {
  const out: Array<{ text: string; finish: string | null | undefined }> = [];
  for await (const c of stream)
    out.push({ text: c.choices[0]?.delta?.content ?? '', finish: c.choices[0]?.finish_reason });
  return out;
}

describe('a refusal inside a stream is the engine’s content_filter (guardedFetch + OpenAI SDK)', () => {
  it.each([
    ['before any token', ''],
    ['after tokens', 'Well, '],
  ])(
    'finish_reason content_filter %s: not retried, not failed over, the caller reads the provider’s finish',
    async (_w, text) => {
      const s = await serve([{ sse: filtered(text) }, { sse: openaiStream('never') }]);
      const { base, run, of } = engineSetup();
      const f = guardedFetch({ ...base, targets: models });
      const c = new OpenAI({ apiKey: 'test', baseURL: `${s.origin}/v1`, maxRetries: 0, fetch: f });
      const { data, response } = await run(c.chat.completions.create({ ...ask, stream: true }).withResponse());
      const got = await run(chunks(data));
      expect(got.at(-1)).toEqual({ text: '', finish: 'content_filter' });
      expect(got.map((g) => g.text).join('')).toBe(text);
      expect(s.requests).toHaveLength(1);
      expect([...of('retry'), ...of('fallback')]).toEqual([]);
      // Whole before commit (the server sends it in one write), the refusal is the guard's final
      // answer, marked so as every final error answer is.
      expect(response.headers.get('x-should-retry')).toBe('false');
    },
  );

  it("fails a refusal before commit over with onContentFilter: 'fallback'; the fallback gets the original request", async () => {
    const s = await serve([{ sse: filtered() }, { sse: openaiStream('Fine.') }]);
    const { base, run, of } = engineSetup();
    const f = guardedFetch({ ...base, targets: models, onContentFilter: 'fallback' });
    const c = new OpenAI({ apiKey: 'test', baseURL: `${s.origin}/v1`, maxRetries: 0, fetch: f });
    const got = await run(chunks(await run(c.chat.completions.create({ ...ask, stream: true }))));
    expect(got.map((g) => g.text).join('')).toBe('Fine.');
    expect(of('fallback')).toEqual([expect.objectContaining({ from: 'primary', to: 'mini', why: 'content_filter' })]);
    const [first, second] = s.requests.map((r) => JSON.parse(r.body) as Record<string, unknown>);
    expect(second).toEqual({ ...first, model: 'gpt-4o-mini' });
  });

  it('an Anthropic stop_reason refusal: handed back whole with its explanation, one request', async () => {
    const s = await serve([{ events: refused() }]);
    const b = await serve([{ events: [...anthropicStart(), anthropicText('never')] }]);
    const { base, run, of } = engineSetup();
    const f = guardedFetch({ ...base, targets: [s.origin, b.origin] });
    const res = await run(
      f(`${s.origin}/v1/messages`, { method: 'POST', body: JSON.stringify({ ...ask, stream: true }) }),
    );
    const body = await run(res.text());
    expect(res.status).toBe(200);
    expect(body).toContain('"stop_reason":"refusal"');
    expect(body).toContain('Declined by policy.');
    expect(s.requests).toHaveLength(1);
    expect(b.requests).toHaveLength(0);
    expect(res.headers.get('x-should-retry')).toBe('false');
    expect(of('fallback')).toEqual([]);
  });
});

describe('a refusal inside a stream through the undici interceptor', () => {
  it('content_filter before any token: handed back as it came, not retried or failed over', async () => {
    const s = await serve([{ sse: filtered() }, { sse: openaiStream('never') }]);
    const { base, run, of } = engineSetup();
    const d = guarded({ ...base, targets: models });
    const res = await run(postJson(d, `${s.origin}/v1/chat/completions`, { ...ask, stream: true }));
    const body = await run(res.body.text());
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-stormlab-target']).toBe('primary');
    expect(body).toContain('"finish_reason":"content_filter"');
    expect(body).toContain('[DONE]');
    expect(s.requests).toHaveLength(1);
    expect(res.headers['x-should-retry']).toBe('false');
    expect([...of('retry'), ...of('fallback')]).toEqual([]);
  });

  it('content_filter after tokens: the stream as it came, classified content_filter', async () => {
    const s = await serve([{ sse: filtered('Well, ') }, { sse: openaiStream('never') }]);
    const { base, run, of } = engineSetup();
    const d = guarded({ ...base, targets: models });
    const res = await run(postJson(d, `${s.origin}/v1/chat/completions`, { ...ask, stream: true }));
    const body = await run(res.body.text());
    expect(body).toContain('"finish_reason":"content_filter"');
    expect(s.requests).toHaveLength(1);
    expect([...of('retry'), ...of('fallback')]).toEqual([]);
  });

  it("onContentFilter: 'fallback' fails a refusal before commit over to the next model", async () => {
    const s = await serve([{ sse: filtered() }, { sse: openaiStream('Fine.') }]);
    const { base, run, of } = engineSetup();
    const d = guarded({ ...base, targets: models, onContentFilter: 'fallback' });
    const res = await run(postJson(d, `${s.origin}/v1/chat/completions`, { ...ask, stream: true }));
    const body = await run(res.body.text());
    expect(res.headers['x-stormlab-target']).toBe('mini');
    expect(body).toContain('Fine.');
    expect(of('fallback')).toEqual([expect.objectContaining({ why: 'content_filter' })]);
  });
});
