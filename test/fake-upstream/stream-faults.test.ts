import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/engine/manual-clock.js';
import type { FaultPhaseInput } from '../../src/fake-upstream/fault-phases.js';
import { fast, json, nextText, readUntilBroken, sseEvents, start, USER, type SseEvent } from './harness.js';

// Each stream fault rendered for real over HTTP (a server on port 0), in both providers' shapes.

const withFault = (fault: FaultPhaseInput, model: Record<string, unknown> = {}) =>
  start({ models: [fast('m', model)], faults: [fault] });
const PREFILL = [...USER, { role: 'assistant', content: 'Retry storms are' }];
const parse = (e: SseEvent) => JSON.parse(e.data);
const openaiText = (events: SseEvent[]) =>
  events
    .filter((e) => e.data !== '[DONE]')
    .map((e) => parse(e).choices[0]?.delta?.content ?? '')
    .join('');
const anthropicText = (events: SseEvent[]) =>
  events
    .filter((e) => e.event === 'content_block_delta')
    .map((e) => parse(e).delta.text)
    .join('');
const words = (text: string) => text.split(' ').filter((w) => w !== '');

describe('fake upstream: stream faults, OpenAI chat completions', () => {
  it('cut: the stream ends cleanly after afterTokens tokens, with no finish_reason and no [DONE]', async () => {
    const h = await withFault({ kind: 'cut', afterTokens: 5 });
    const res = await h.chat({ max_tokens: 20, stream: true });
    expect(res.status).toBe(200);
    const { text, error } = await readUntilBroken(res);
    expect(error).toBeUndefined(); // a clean end of the body: nothing tells the client it was cut
    const events = sseEvents(text);
    expect(events.some((e) => e.data === '[DONE]')).toBe(false);
    expect(events.every((e) => parse(e).choices[0].finish_reason === null)).toBe(true);
    expect(words(openaiText(events))).toHaveLength(5);
  });

  it('cut: the official SDK reads it as a complete answer (what a truncated success is)', async () => {
    const h = await withFault({ kind: 'cut', afterTokens: 5 });
    const client = new OpenAI({ baseURL: `${h.url}/v1`, apiKey: 'test', maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'Say something about retry storms.' }],
      max_tokens: 20,
      stream: true,
    });
    let content = '';
    const finishes: unknown[] = [];
    for await (const chunk of stream) {
      content += chunk.choices[0]?.delta.content ?? '';
      finishes.push(chunk.choices[0]?.finish_reason);
    }
    expect(words(content)).toHaveLength(5);
    expect(finishes.every((f) => f === null)).toBe(true);
  });

  it('cut, not streamed: half a JSON body, then the connection closes', async () => {
    const h = await withFault({ kind: 'cut', afterTokens: 5 });
    const res = await h.chat({ max_tokens: 20 });
    expect(res.status).toBe(200);
    const { text, error } = await readUntilBroken(res);
    expect(error).toBeDefined();
    expect(() => JSON.parse(text)).toThrow();
  });

  it('malformed: one event that is not JSON before the last content chunk, then the finish and [DONE]', async () => {
    const h = await withFault({ kind: 'malformed' });
    const events = sseEvents(await (await h.chat({ max_tokens: 20, stream: true })).text());
    const bad = events.filter((e) => {
      try {
        JSON.parse(e.data);
        return false;
      } catch {
        return e.data !== '[DONE]';
      }
    });
    expect(bad).toHaveLength(1);
    const i = events.indexOf(bad[0]);
    const good = events.filter((e) => e !== bad[0]);
    expect(parse(good.at(-2)!).choices[0].finish_reason).toBe('length'); // cut at max_tokens: 20
    expect(good.at(-1)!.data).toBe('[DONE]');
    expect(i).toBeLessThan(events.length - 2);
    expect(words(openaiText(good))).toHaveLength(20);
  });

  it('malformed, not streamed: a 200 whose body is not JSON', async () => {
    const h = await withFault({ kind: 'malformed' });
    const res = await h.chat({ max_tokens: 20 });
    expect(res.status).toBe(200);
    await expect(res.json()).rejects.toThrow();
  });

  it('missing-done: the finish (and usage) come, [DONE] never does', async () => {
    const h = await withFault({ kind: 'missing-done' });
    const res = await h.chat({ max_tokens: 8, stream: true, stream_options: { include_usage: true } });
    const { text, error } = await readUntilBroken(res);
    expect(error).toBeUndefined();
    const events = sseEvents(text);
    expect(events.some((e) => e.data === '[DONE]')).toBe(false);
    expect(parse(events.at(-2)!).choices[0].finish_reason).toBe('length');
    expect(parse(events.at(-1)!).usage).toMatchObject({ completion_tokens: 8 });
  });

  it('content-filter (finish): afterTokens tokens, then finish_reason content_filter; not streamed too', async () => {
    const h = await withFault({ kind: 'content-filter', afterTokens: 3 });
    const events = sseEvents(await (await h.chat({ max_tokens: 20, stream: true })).text());
    expect(events.at(-1)!.data).toBe('[DONE]');
    expect(parse(events.at(-2)!).choices[0].finish_reason).toBe('content_filter');
    expect(words(openaiText(events))).toHaveLength(3);
    const body = await json(h.chat({ max_tokens: 20 }));
    expect(body.choices[0].finish_reason).toBe('content_filter');
    expect(body.usage.completion_tokens).toBe(3);
  });

  it('content-filter (reject): a 400 content_filter error before any token', async () => {
    const h = await withFault({ kind: 'content-filter', mode: 'reject' });
    const res = await h.chat({ max_tokens: 20, stream: true });
    expect(res.status).toBe(400);
    expect((await json(res)).error).toMatchObject({ type: 'invalid_request_error', code: 'content_filter' });
  });

  it('prefill-rejected: a 400 when the last message is the assistant, served otherwise', async () => {
    const h = await withFault({ kind: 'prefill-rejected' }, { continuation: 'prefill' });
    const res = await h.chat({ messages: PREFILL });
    expect(res.status).toBe(400);
    expect((await json(res)).error).toMatchObject({ type: 'invalid_request_error', param: 'messages' });
    expect((await h.chat({})).status).toBe(200);
  });

  it('context-length: the phase window refuses larger requests with context_length_exceeded', async () => {
    const h = await withFault({ kind: 'context-length', contextTokens: 100 });
    const res = await h.chat({ max_tokens: 200 });
    expect(res.status).toBe(400);
    expect((await json(res)).error).toMatchObject({ code: 'context_length_exceeded', param: 'messages' });
    expect((await h.chat({ max_tokens: 20 })).status).toBe(200);
  });
});

describe('fake upstream: stream faults, Anthropic messages', () => {
  it('cut: content only — no content_block_stop, message_delta or message_stop, and a clean end', async () => {
    const h = await withFault({ kind: 'cut', afterTokens: 5 });
    const { text, error } = await readUntilBroken(await h.messages({ max_tokens: 20, stream: true }));
    expect(error).toBeUndefined();
    const types = sseEvents(text).map((e) => e.event);
    expect(types).not.toContain('message_stop');
    expect(types).not.toContain('message_delta');
    expect(types).not.toContain('error');
    expect(words(anthropicText(sseEvents(text)))).toHaveLength(5);
  });

  it('missing-done: message_delta with its stop_reason, no message_stop', async () => {
    const h = await withFault({ kind: 'missing-done' });
    const events = sseEvents(await (await h.messages({ max_tokens: 8, stream: true })).text());
    expect(events.at(-1)!.event).toBe('message_delta');
    expect(parse(events.at(-1)!).delta.stop_reason).toBe('max_tokens');
    expect(events.map((e) => e.event)).not.toContain('message_stop');
  });

  it('malformed: one content_block_delta whose data is not JSON', async () => {
    const h = await withFault({ kind: 'malformed' });
    const events = sseEvents(await (await h.messages({ max_tokens: 8, stream: true })).text());
    const bad = events.filter((e) => {
      try {
        JSON.parse(e.data);
        return false;
      } catch {
        return true;
      }
    });
    expect(bad.map((e) => e.event)).toEqual(['content_block_delta']);
    expect(events.at(-1)!.event).toBe('message_stop');
  });

  it('content-filter: stop_reason refusal (streamed and not); reject is a 400 with the policy message', async () => {
    const h = await withFault({ kind: 'content-filter', afterTokens: 2 });
    const events = sseEvents(await (await h.messages({ max_tokens: 20, stream: true })).text());
    const delta = events.find((e) => e.event === 'message_delta')!;
    expect(parse(delta).delta.stop_reason).toBe('refusal');
    expect(words(anthropicText(events))).toHaveLength(2);
    expect((await json(h.messages({ max_tokens: 20 }))).stop_reason).toBe('refusal');
    h.fu.setFaults([{ kind: 'content-filter', mode: 'reject' }]);
    const res = await h.messages({ max_tokens: 20 });
    expect(res.status).toBe(400);
    expect(await json(res)).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'Output blocked by content filtering policy' },
    });
  });

  it('prefill-rejected and context-length in Anthropic shape', async () => {
    const h = await withFault({ kind: 'prefill-rejected' }, { continuation: 'prefill' });
    const res = await h.messages({ messages: PREFILL });
    expect(res.status).toBe(400);
    expect((await json(res)).error.message).toMatch(/does not support assistant message prefill/);
    h.fu.setFaults([{ kind: 'context-length', contextTokens: 50 }]);
    const long = await h.messages({ max_tokens: 100 });
    expect(long.status).toBe(400);
    expect((await json(long)).error).toEqual({
      type: 'invalid_request_error',
      message: 'prompt is too long: tokens > maximum',
    });
  });
});

describe('fake upstream: stream timing faults (manual clock)', () => {
  /** Reads from `reader` until `n` SSE events have come (the clock has already passed them). */
  const reading = (res: Response) => {
    const reader = res.body!.getReader();
    const received: string[] = [];
    return async (n: number) => {
      while (sseEvents(received.join('')).length < n) received.push(await nextText(reader));
      return sseEvents(received.join(''));
    };
  };

  it('slow-first-token: no headers until ttftMs, then the stream at its pace', async () => {
    const clock = new ManualClock();
    const h = await start(
      { models: [fast('m', { ttftMs: 10, tpotMs: 0 })], faults: [{ kind: 'slow-first-token', ttftMs: 5_000 }] },
      { clock },
    );
    let headers = false;
    const pending = h.chat({ max_tokens: 4, stream: true }).then((r) => {
      headers = true;
      return r;
    });
    await h.waitFor('submitted');
    clock.advance(4_999);
    await new Promise((r) => setImmediate(r));
    expect(headers).toBe(false);
    clock.advance(1);
    const events = sseEvents(await (await pending).text());
    expect(events.at(-1)!.data).toBe('[DONE]');
  });

  it('stall: after the first tokens nothing for stallMs with the connection open, then the rest', async () => {
    const clock = new ManualClock();
    // 32 tokens at 10 ms in 16 chunks (one every 20 ms from the first token at 10 ms); a stall after 5 tokens (at 60 ms) for 1 s.
    const h = await start(
      {
        models: [fast('m', { ttftMs: 10, tpotMs: 10 })],
        faults: [{ kind: 'stall', afterTokens: 5, stallMs: 1_000 }],
      },
      { clock },
    );
    const pending = h.chat({ max_tokens: 32, stream: true });
    await h.waitFor('submitted');
    clock.advance(10);
    const read = reading(await pending);
    expect(await read(2)).toHaveLength(2); // the opening chunk and the first content chunk
    clock.advance(50); // chunks at 30 and 50 ms; the stall begins at 60
    expect(words(openaiText(await read(4)))).toHaveLength(6);
    clock.advance(900);
    await new Promise((r) => setImmediate(r));
    expect(h.count('answered')).toBe(0); // 960 ms: still stalled, the connection open
    clock.advance(400); // past the stall (1,060 ms) and the last 27 tokens (1,330 ms)
    const all = await read(19);
    expect(all.at(-1)!.data).toBe('[DONE]');
    expect(words(openaiText(all))).toHaveLength(32);
    expect(h.count('answered')).toBe(1);
  });

  it('stall forever: the stream stays open until the client leaves; then its slot is free again', async () => {
    const clock = new ManualClock();
    const h = await start(
      {
        models: [{ ...fast('m', { ttftMs: 10, tpotMs: 1 }), slots: 1, queue: 0 }],
        faults: [{ kind: 'stall', afterTokens: 4, toMs: 5_000 }],
      },
      { clock },
    );
    const abort = new AbortController();
    const pending = h.chat({ max_tokens: 16, stream: true }, { signal: abort.signal });
    await h.waitFor('submitted');
    clock.advance(10);
    const read = reading(await pending);
    await read(2);
    clock.advance(60_000);
    await new Promise((r) => setImmediate(r));
    expect(h.count('answered')).toBe(0);
    expect(h.fu.stats().models[0]).toMatchObject({ busy: 1 });
    abort.abort();
    await h.waitFor('cancelled');
    expect(h.fu.stats().models[0]).toMatchObject({ busy: 0, cancelled: 1 });
    // The phase is over: the next request is served in full.
    const next = h.chat({ max_tokens: 4, stream: true });
    await h.waitFor('submitted', 2);
    clock.advance(20);
    expect(sseEvents(await (await next).text()).at(-1)!.data).toBe('[DONE]');
  });
});

describe('fake upstream: stream fault phases through the control API', () => {
  it('takes the stream faults, a forever stall as stallMs null, and names a bad field', async () => {
    const h = await start({ models: [fast()] });
    const put = (body: unknown) =>
      fetch(`${h.url}/_stormlab/faults`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const ok = await put([
      { kind: 'stall', afterTokens: 3, stallMs: null },
      { kind: 'cut', afterTokens: 9 },
    ]);
    expect(ok.status).toBe(200);
    expect((await json(ok)).faults).toEqual([
      { kind: 'stall', afterTokens: 3, fromMs: expect.any(Number), toMs: null, rate: 1 },
      { kind: 'cut', afterTokens: 9, fromMs: expect.any(Number), toMs: null, rate: 1 },
    ]);
    const bad = await put([{ kind: 'cut' }]);
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.message).toBe('faults[0].afterTokens is required for kind cut');
    const wrong = await put([{ kind: 'slow-first-token', ttftMs: 'soon' }]);
    expect((await json(wrong)).error.message).toBe('faults[0].ttftMs must be a number >= 0, got "soon"');
  });
});
