import { describe, expect, it } from 'vitest';
import { fast, json, length, sseEvents, start } from './harness.js';

describe('fake upstream: Anthropic messages', () => {
  it('answers a message with one text block and its usage, cut at max_tokens', async () => {
    const h = await start({ models: [fast()] });
    const res = await h.messages({ max_tokens: 7, system: 'Be brief.' });
    expect(res.status).toBe(200);
    expect(res.headers.get('request-id')).toMatch(/^req_msg_/);
    const body = await json(res);
    expect(body).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'm',
      stop_reason: 'max_tokens',
      stop_sequence: null,
    });
    expect(body.content).toHaveLength(1);
    expect(body.content[0].type).toBe('text');
    expect(body.content[0].text.split(' ')).toHaveLength(7);
    // messages 33 / 3 + 4, system ceil(9 / 3) + 4.
    expect(body.usage).toEqual({ input_tokens: 22, output_tokens: 7 });
  });

  it('streams message_start, content blocks, message_delta with the usage and message_stop', async () => {
    const h = await start({ models: [fast()] });
    // A natural length of 20 tokens under a limit of 4096: the turn ends by itself.
    const res = await h.messages({ max_tokens: 4096, stream: true }, length(20));
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const events = sseEvents(await res.text());
    const types = events.map((e) => e.event);
    expect(types[0]).toBe('message_start');
    expect(types[1]).toBe('content_block_start');
    expect(types.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    expect(events.every((e) => JSON.parse(e.data).type === e.event)).toBe(true);
    const deltas = events.filter((e) => e.event === 'content_block_delta').map((e) => JSON.parse(e.data).delta);
    expect(deltas.every((d) => d.type === 'text_delta')).toBe(true);
    expect(
      deltas
        .map((d) => d.text)
        .join('')
        .split(' '),
    ).toHaveLength(20);
    expect(JSON.parse(events[0].data).message.usage).toEqual({ input_tokens: 15, output_tokens: 1 });
    expect(JSON.parse(events.at(-2)!.data)).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 20 },
    });
  });

  it('answers an unknown model with 404 not_found_error when unknown names are rejected', async () => {
    const h = await start({ models: [fast()] }, { unknownModels: 'reject' });
    const res = await h.messages({ model: 'claude-nope' });
    expect(res.status).toBe(404);
    expect(await json(res)).toEqual({
      type: 'error',
      error: { type: 'not_found_error', message: 'model: claude-nope' },
    });
  });

  it('sends anthropic-ratelimit-* headers, and a rate_limit_error 429 with retry-after past the RPM', async () => {
    const h = await start({ models: [fast('m', { rpm: 1 })] });
    const ok = await h.messages({});
    expect(ok.status).toBe(200);
    expect(ok.headers.get('anthropic-ratelimit-requests-limit')).toBe('1');
    expect(ok.headers.get('anthropic-ratelimit-requests-remaining')).toBe('0');
    expect(Date.parse(ok.headers.get('anthropic-ratelimit-requests-reset')!)).toBeGreaterThan(Date.now() + 58_000);
    expect(ok.headers.get('x-ratelimit-limit-requests')).toBeNull();
    const refused = await h.messages({});
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(refused.headers.get('retry-after-ms')).toBeNull();
    expect(await json(refused)).toEqual({
      type: 'error',
      error: {
        type: 'rate_limit_error',
        message: 'This request would exceed the rate limit for your organization on requests per minute.',
      },
    });
  });

  it('sheds past the queue with 529 overloaded_error', async () => {
    const h = await start({ models: [{ name: 'm', slots: 1, queue: 0, ttftMs: 60_000, tpotMs: 0 }] });
    const ctrl = new AbortController();
    const first = h.messages({}, { signal: ctrl.signal });
    await h.waitFor('submitted');
    const res = await h.messages({});
    expect(res.status).toBe(529);
    expect(await json(res)).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    ctrl.abort();
    await expect(first).rejects.toThrow();
  });

  it("lists the models in Anthropic's shape when anthropic-version is sent", async () => {
    const h = await start({ models: [fast('a'), fast('b')] });
    const body = await json(fetch(`${h.url}/v1/models`, { headers: { 'anthropic-version': '2023-06-01' } }));
    expect(body).toMatchObject({
      data: [
        { type: 'model', id: 'a' },
        { type: 'model', id: 'b' },
      ],
      has_more: false,
      first_id: 'a',
      last_id: 'b',
    });
  });
});
