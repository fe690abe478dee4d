import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import type { FakeUpstream } from '../../src/fake-upstream/server.js';
import { fast, start } from './harness.js';

const openai = (url: string, options: ConstructorParameters<typeof OpenAI>[0] = {}) =>
  new OpenAI({ baseURL: `${url}/v1`, apiKey: 'test', maxRetries: 0, ...options });
const anthropic = (url: string) => new Anthropic({ baseURL: url, apiKey: 'test', maxRetries: 0 });
const user = [{ role: 'user' as const, content: 'Tell me about retry storms.' }];

describe('fake upstream: the official openai SDK (v6)', () => {
  it('gets a completion', async () => {
    const h = await start({ models: [fast('gpt-4o-mini', { rpm: 100 })] });
    const { data, response } = await openai(h.url)
      .chat.completions.create({ model: 'gpt-4o-mini', messages: user, max_tokens: 8 })
      .withResponse();
    expect(data.choices[0].message.content!.split(' ')).toHaveLength(8);
    expect(data.choices[0].finish_reason).toBe('length'); // cut at max_tokens
    expect(data.usage).toMatchObject({ completion_tokens: 8, prompt_tokens: 13, total_tokens: 21 });
    expect(response.headers.get('x-ratelimit-remaining-requests')).toBe('99');
  });

  it('streams chunks with `for await` and ends with the usage', async () => {
    const h = await start({ models: [fast('gpt-4o-mini')] });
    const stream = await openai(h.url).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: user,
      max_tokens: 30,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(chunks).toBeGreaterThan(3);
    expect(text.split(' ')).toHaveLength(30);
    expect(usage).toEqual({ prompt_tokens: 13, completion_tokens: 30, total_tokens: 43 });
  });

  it('honours retry-after-ms on a 429: one retry after ~20 ms instead of its own backoff', async () => {
    let fu: FakeUpstream | undefined;
    // The first attempt meets a 429 phase with a 20 ms hint; the phase is lifted as it answers.
    const h = await start(
      { models: [fast()], faults: [{ kind: 'errors', fromMs: 0, status: 429, retryAfterMs: 20 }] },
      {
        observer: { answered: (_m, status) => void (status === 429 && fu!.setFaults([])) },
      },
    );
    fu = h.fu;
    const sent: number[] = [];
    const client = openai(h.url, {
      maxRetries: 1,
      fetch: (url, init) => {
        sent.push(performance.now());
        return fetch(url, init);
      },
    });
    const completion = await client.chat.completions.create({ model: 'm', messages: user, max_tokens: 4 });
    expect(completion.usage?.completion_tokens).toBe(4);
    expect(h.fu.stats().models[0]).toMatchObject({ attempts: 2, byStatus: { 200: 1, 429: 1 } });
    expect(sent).toHaveLength(2);
    // The SDK's own backoff for a first retry is 375–500 ms; the header says 20.
    expect(sent[1] - sent[0]).toBeGreaterThanOrEqual(19);
    expect(sent[1] - sent[0]).toBeLessThan(375);
  });

  it('throws a RateLimitError with code insufficient_quota, and an APIError when the stream breaks', async () => {
    const h = await start({
      models: [fast('q'), fast('broken')],
      faults: [
        { kind: 'quota', fromMs: 0, model: 'q' },
        { kind: 'midstream', fromMs: 0, model: 'broken' },
      ],
    });
    const client = openai(h.url);
    const quota = await client.chat.completions.create({ model: 'q', messages: user }).catch((e: unknown) => e);
    expect(quota).toBeInstanceOf(OpenAI.RateLimitError);
    expect(quota).toMatchObject({ status: 429, code: 'insufficient_quota', type: 'insufficient_quota' });
    const stream = await client.chat.completions.create({
      model: 'broken',
      messages: user,
      max_tokens: 50,
      stream: true,
    });
    const broke = await (async () => {
      for await (const _chunk of stream) {
        // reading until it breaks
      }
    })().catch((e: unknown) => e);
    expect(broke).toBeInstanceOf(Error);
  });
});

describe('fake upstream: the official Anthropic SDK', () => {
  it('creates a message', async () => {
    const h = await start({ models: [fast('fake-claude')] });
    const message = await anthropic(h.url).messages.create({
      model: 'fake-claude',
      max_tokens: 6,
      messages: user,
      system: 'Be brief.',
    });
    expect(message.content).toHaveLength(1);
    expect(message.content[0].type === 'text' && message.content[0].text.split(' ')).toHaveLength(6);
    expect(message.usage).toMatchObject({ input_tokens: 20, output_tokens: 6 });
    expect(message.stop_reason).toBe('max_tokens'); // cut at max_tokens
  });

  it('streams a message: text events and the final message', async () => {
    const h = await start({ models: [fast('fake-claude')] });
    const stream = anthropic(h.url).messages.stream({ model: 'fake-claude', max_tokens: 25, messages: user });
    const deltas: string[] = [];
    stream.on('text', (t) => deltas.push(t));
    const message = await stream.finalMessage();
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join('').split(' ')).toHaveLength(25);
    expect(message.content[0].type === 'text' && message.content[0].text).toBe(deltas.join(''));
    expect(message.usage).toMatchObject({ input_tokens: 13, output_tokens: 25 });
  });

  it('turns a 529 into an APIError with status 529 and the overloaded_error body', async () => {
    const h = await start({ models: [fast()], faults: [{ kind: 'errors', fromMs: 0, status: 529 }] });
    const err = await anthropic(h.url)
      .messages.create({ model: 'm', max_tokens: 5, messages: user })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(err).toMatchObject({ status: 529, error: { type: 'error', error: { type: 'overloaded_error' } } });
  });
});
