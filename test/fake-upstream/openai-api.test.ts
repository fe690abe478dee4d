import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/engine/manual-clock.js';
import { fast, json, length, nextText, sseEvents, start, USER } from './harness.js';

describe('fake upstream: OpenAI chat completions', () => {
  it('answers a chat.completion cut at max_tokens: filler text of max_tokens words, finish_reason length, its usage', async () => {
    const h = await start({ models: [fast()] });
    const res = await h.chat({ max_tokens: 12 });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('x-request-id')).toMatch(/^req_chatcmpl-/);
    const body = await json(res);
    expect(body).toMatchObject({
      object: 'chat.completion',
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant' }, finish_reason: 'length' }],
    });
    expect(body.choices[0].message.content.split(' ')).toHaveLength(12);
    // 33 characters / 3 + 4 per message.
    expect(body.usage).toEqual({ prompt_tokens: 15, completion_tokens: 12, total_tokens: 27 });
    expect(h.fu.stats().models[0]).toMatchObject({ attempts: 1, byStatus: { 200: 1 }, tokensServed: 27 });
  });

  it('answers the same body sent again the same way but for its id; a body offering tools follows the tool policy each time', async () => {
    const h = await start({ models: [fast()] });
    const first = await json(h.chat({ max_tokens: 5 }));
    const again = await json(h.chat({ max_tokens: 5 }));
    expect(again.id).not.toBe(first.id);
    expect({ ...again, id: first.id, created: first.created }).toEqual(first);
    const streamed = sseEvents(await (await h.chat({ max_tokens: 5, stream: true })).text());
    expect(streamed.at(-1)!.data).toBe('[DONE]'); // the same text but `stream: true`: not the remembered answer
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }];
    h.fu.setToolPolicy({ rounds: 0 }); // no tool turn: the plain answer, though tools are offered
    const answered = await json(h.chat({ max_tokens: 50, tools }));
    expect(answered.choices[0].finish_reason).toBe('length'); // filler, cut at 50 tokens
    h.fu.setToolPolicy({ rounds: 1 });
    const called = await json(h.chat({ max_tokens: 50, tools }));
    expect(called.choices[0].finish_reason).toBe('tool_calls');
    expect(h.fu.requests().map((r) => [r.model, r.status])).toEqual(Array(5).fill(['m', 200]));
  });

  it('takes max_completion_tokens over max_tokens, and 4096 when neither is given', async () => {
    const h = await start({ models: [fast()] });
    const both = await json(h.chat({ max_tokens: 50, max_completion_tokens: 3 }, length('max')));
    expect(both.usage.completion_tokens).toBe(3);
    const none = await json(h.chat({}, length('max')));
    expect(none.usage.completion_tokens).toBe(4096);
  });

  it('streams chat.completion.chunk events, a usage chunk when asked, then [DONE]', async () => {
    const h = await start({ models: [fast()] });
    const res = await h.chat({ max_tokens: 40, stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const events = sseEvents(await res.text());
    expect(events.at(-1)!.data).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === chunks[0].id)).toBe(true);
    expect(chunks[0].choices[0].delta).toMatchObject({ role: 'assistant', content: '' });
    const text = chunks
      .flatMap((c) => c.choices)
      .map((c) => c.delta.content ?? '')
      .join('');
    expect(text.split(' ')).toHaveLength(40);
    expect(chunks.at(-2).choices[0].finish_reason).toBe('length');
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 15, completion_tokens: 40, total_tokens: 55 },
    });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });

  it('streams without a usage chunk when include_usage is not set', async () => {
    const h = await start({ models: [fast()] });
    const events = sseEvents(await (await h.chat({ max_tokens: 5, stream: true })).text());
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
    expect(chunks.some((c) => 'usage' in c)).toBe(false);
    expect(chunks.at(-1).choices[0].finish_reason).toBe('length');
  });

  it('paces a stream the model started at once: headers at the first token, chunks spread until the end', async () => {
    // 20 ms to the first token, 1 ms per token, 60 tokens: service 80 ms, the first token at 20.
    const clock = new ManualClock();
    const h = await start({ models: [fast('m', { ttftMs: 20, tpotMs: 1 })] }, { clock });
    const pending = h.chat({ max_tokens: 60, stream: true }, length('max'));
    await h.waitFor('submitted');
    clock.advance(20);
    const res = await pending;
    const reader = res.body!.getReader();
    const received: string[] = [];
    /** Reads until `n` SSE events have come (they are on their way: the clock has passed them). */
    const readEvents = async (n: number) => {
      while (sseEvents(received.join('')).length < n) received.push(await nextText(reader));
      return sseEvents(received.join(''));
    };
    // At the first token: the opening chunk and the first of 16 content chunks (60 words / 16).
    expect((await readEvents(2)).map((e) => JSON.parse(e.data).choices[0].delta.content)).toEqual([
      '',
      'the storm passes',
    ]);
    // 60 ms of tokens in 16 chunks, the first now and the last with the answer: one every 4 ms;
    // by t = 50 the opening and chunks 0..7 are out.
    clock.advance(30);
    const mid = await readEvents(9);
    expect(mid).toHaveLength(9);
    expect(h.count('answered')).toBe(0);
    clock.advance(30);
    const all = await readEvents(19);
    expect(all.at(-1)!.data).toBe('[DONE]');
    expect(
      all
        .slice(1, -2)
        .map((e) => JSON.parse(e.data).choices[0].delta.content)
        .join('')
        .split(' '),
    ).toHaveLength(60);
    expect(h.count('answered')).toBe(1);
  });

  it('paces a long stream in more chunks, never more than 250 ms apart, so it never reads as a stall', async () => {
    // 10 ms to the first token, then 1,000 tokens at 10 ms: 10 s of tokens, 41 chunks 250 ms apart.
    const clock = new ManualClock();
    const h = await start({ models: [fast('m', { ttftMs: 10, tpotMs: 10 })] }, { clock });
    const pending = h.chat({ max_tokens: 1_000, stream: true }, length('max'));
    await h.waitFor('submitted');
    clock.advance(10);
    const reader = (await pending).body!.getReader();
    let text = '';
    const count = () => sseEvents(text).length;
    const readAtLeast = async (n: number) => {
      while (count() < n) text += await nextText(reader);
    };
    await readAtLeast(2); // the opening and the first chunk
    for (let i = 1; i < 40; i++) {
      clock.advance(250);
      await readAtLeast(2 + i); // every 250 ms brings the next chunk
    }
    clock.advance(250);
    await readAtLeast(2 + 40 + 2); // the last chunk with the answer, then the finish and [DONE]
    const events = sseEvents(text);
    expect(events.at(-1)!.data).toBe('[DONE]');
    const content = events.slice(1, -2).map((e) => JSON.parse(e.data).choices[0].delta.content ?? '');
    expect(content.filter((c: string) => c !== '')).toHaveLength(41);
    expect(content.join('').split(' ')).toHaveLength(1_000);
  });

  it('lists the models', async () => {
    const h = await start({ models: [fast('a'), fast('b')] });
    const body = await json(fetch(`${h.url}/v1/models`));
    expect(body).toMatchObject({
      object: 'list',
      data: [
        { id: 'a', object: 'model', owned_by: 'stormlab' },
        { id: 'b', object: 'model' },
      ],
    });
  });

  it('answers an unknown model with 404 model_not_found when unknown names are rejected, without reaching the model', async () => {
    const h = await start({ models: [fast()] }, { unknownModels: 'reject' });
    const res = await h.chat({ model: 'gpt-nope' });
    expect(res.status).toBe(404);
    expect((await json(res)).error).toEqual({
      message: 'The model `gpt-nope` does not exist or you do not have access to it.',
      type: 'invalid_request_error',
      param: 'model',
      code: 'model_not_found',
    });
    expect(h.fu.stats().models[0].attempts).toBe(0);
  });

  it('answers 400 context_length_exceeded past the model context', async () => {
    const h = await start({ models: [fast('m', { contextTokens: 100 })] });
    const res = await h.chat({ max_tokens: 200 });
    expect(res.status).toBe(400);
    expect((await json(res)).error).toMatchObject({
      type: 'invalid_request_error',
      code: 'context_length_exceeded',
      param: 'messages',
    });
  });

  it('sends x-ratelimit-* headers on successes when the model has quotas', async () => {
    const h = await start({ models: [fast('m', { rpm: 10, tpm: 1000 })] });
    const res = await h.chat({ max_tokens: 10 });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit-requests')).toBe('10');
    expect(res.headers.get('x-ratelimit-remaining-requests')).toBe('9');
    expect(res.headers.get('x-ratelimit-limit-tokens')).toBe('1000');
    expect(res.headers.get('x-ratelimit-remaining-tokens')).toBe('975');
    expect(res.headers.get('x-ratelimit-reset-requests')).toMatch(/^(59(\.\d+)?s|1m0s)$/);
    expect(res.headers.get('anthropic-ratelimit-requests-limit')).toBeNull();
  });

  it('sends no rate-limit headers for a model without quotas', async () => {
    const h = await start({ models: [fast()] });
    const res = await h.chat({ messages: USER });
    expect([...res.headers.keys()].filter((k) => k.includes('ratelimit'))).toEqual([]);
  });
});
