import { describe, expect, it } from 'vitest';
import { fillerText } from '../../src/fake-upstream/filler-text.js';
import { prefillText, prefillWords } from '../../src/fake-upstream/prefill.js';
import { fast, json, length, sseEvents, start, USER, type SseEvent } from './harness.js';

// A trailing assistant message (a prefill) on each chat route: continued by a model that
// declares `continuation: prefill`, refused with the provider's 400 by one that does not, and by
// a declaring model while a `prefill-rejected` phase (the declaration's fault form) lasts.

const prefilled = (text: string) => [...USER, { role: 'assistant', content: text }];
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
const both = () => start({ models: [fast('cont', { continuation: 'prefill' }), fast('plain')], faults: [] });

describe('fake upstream: continuation of a prefill', () => {
  it('chat completions: a declaring model answers the rest of its answer, in JSON and streamed', async () => {
    const h = await both();
    const head = fillerText(0, 40);
    const whole = await json(await h.chat({ model: 'cont', max_tokens: 500 }, length(60)));
    expect(whole.choices[0].message.content).toBe(fillerText(0, 60));
    const rest = await json(await h.chat({ model: 'cont', messages: prefilled(head), max_tokens: 500 }, length(60)));
    expect(rest.choices[0].message.content).toBe(fillerText(40, 60));
    expect(head + rest.choices[0].message.content).toBe(fillerText(0, 60));
    expect(rest.choices[0].finish_reason).toBe('stop');
    expect(rest.usage.completion_tokens).toBe(20);
    // The prefill is part of the prompt the model read.
    expect(rest.usage.prompt_tokens).toBeGreaterThan(whole.usage.prompt_tokens);
    const res = await h.chat(
      {
        model: 'cont',
        messages: prefilled(head),
        max_tokens: 500,
        stream: true,
        stream_options: { include_usage: true },
      },
      length(60),
    );
    const events = sseEvents(await res.text());
    expect(openaiText(events)).toBe(fillerText(40, 60));
    expect(events.at(-1)!.data).toBe('[DONE]');
  });

  it('messages: a declaring model continues a prefill given as text blocks', async () => {
    const h = await both();
    const blocks = [...USER, { role: 'assistant', content: [{ type: 'text', text: fillerText(0, 7) }] }];
    const res = await h.messages({ model: 'cont', messages: blocks, max_tokens: 100, stream: true }, length(10));
    expect(anthropicText(sseEvents(await res.text()))).toBe(fillerText(7, 10));
    const msg = await json(await h.messages({ model: 'cont', messages: blocks, max_tokens: 100 }, length(10)));
    expect(msg.content[0].text).toBe(fillerText(7, 10));
    expect(msg.usage.output_tokens).toBe(3);
  });

  it('max_tokens bounds the continuation, not the prefill', async () => {
    const h = await both();
    const rest = await json(
      await h.chat({ model: 'cont', messages: prefilled(fillerText(0, 40)), max_tokens: 5 }, length(60)),
    );
    expect(rest.choices[0].message.content).toBe(fillerText(40, 45));
    expect(rest.choices[0].finish_reason).toBe('length');
  });

  it('a model that does not declare it answers the provider 400 on both routes', async () => {
    const h = await both();
    const chat = await h.chat({ model: 'plain', messages: prefilled('the storm') });
    expect(chat.status).toBe(400);
    expect((await json(chat)).error).toMatchObject({ type: 'invalid_request_error', param: 'messages' });
    const msg = await h.messages({ model: 'plain', messages: prefilled('the storm') });
    expect(msg.status).toBe(400);
    expect((await json(msg)).error.message).toMatch(/does not support assistant message prefill/);
    // A conversation that ends with the user is answered as ever.
    expect((await h.chat({ model: 'plain' })).status).toBe(200);
  });

  it('prefill-rejected makes a declaring model refuse prefills while it lasts, and only those', async () => {
    const h = await start({
      models: [fast('cont', { continuation: 'prefill' })],
      faults: [{ kind: 'prefill-rejected', model: 'cont' }],
    });
    expect((await h.chat({ model: 'cont', messages: prefilled('the') })).status).toBe(400);
    expect((await h.messages({ model: 'cont', messages: prefilled('the') })).status).toBe(400);
    expect((await h.chat({ model: 'cont' })).status).toBe(200);
  });

  it('a prefill-rejected phase that reaches no declaring model is refused, at start and on the control API', async () => {
    await expect(
      start({ models: [fast('plain')], faults: [{ kind: 'prefill-rejected', model: 'plain' }] }),
    ).rejects.toThrow(/model "plain" does not declare continuation: prefill/);
    const h = await both();
    const res = await fetch(`${h.url}/_stormlab/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ kind: 'prefill-rejected', model: 'plain' }]),
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toMatch(
      /faults\[0\]: prefill-rejected, but model \\"plain\\" does not declare/,
    );
    const all = await fetch(`${h.url}/_stormlab/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ kind: 'prefill-rejected' }]),
    });
    expect(all.status).toBe(200);
  });
});

describe('prefill reading', () => {
  it('reads string content and text parts, and counts words by whitespace', () => {
    expect(prefillText({ messages: prefilled('a b') })).toBe('a b');
    expect(prefillText({ messages: USER })).toBeUndefined();
    expect(
      prefillText({
        messages: [
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'x ' },
              { type: 'text', text: 'y' },
            ],
          },
        ],
      }),
    ).toBe('x y');
    expect(prefillText({ messages: [{ role: 'assistant', content: null }] })).toBe('');
    expect(prefillWords('')).toBe(0);
    expect(prefillWords('  the storm\n passes\t')).toBe(3);
    expect(prefillWords(fillerText(0, 40))).toBe(40);
  });
});
