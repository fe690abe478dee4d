import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/engine/manual-clock.js';
import { fast, json, length, sseEvents, start, USER } from './harness.js';

const openai = (url: string) => new OpenAI({ baseURL: `${url}/v1`, apiKey: 'test', maxRetries: 0 });
const anthropic = (url: string) => new Anthropic({ baseURL: url, apiKey: 'test', maxRetries: 0 });
const user = [{ role: 'user' as const, content: 'Tell me about retry storms.' }];
const words = (text: string | null | undefined) => (text ?? '').split(' ').filter((w) => w !== '').length;

describe('fake upstream: answers end at their natural length, or at max_tokens with length', () => {
  it('openai SDK, max_tokens 4096: a natural length, finish_reason stop, usage what was sent', async () => {
    const h = await start({ models: [fast('gpt-4o-mini')] });
    const r = await openai(h.url).chat.completions.create({ model: 'gpt-4o-mini', messages: user, max_tokens: 4096 });
    expect(r.choices[0].finish_reason).toBe('stop');
    const n = r.usage!.completion_tokens;
    expect(n).toBeGreaterThan(0);
    expect(n).toBeLessThan(4096);
    expect(words(r.choices[0].message.content)).toBe(n);

    const stream = await openai(h.url).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: user,
      max_tokens: 4096,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
      usage = c.usage ?? usage;
    }
    expect(finish).toBe('stop');
    expect(usage!.completion_tokens).toBeLessThan(4096);
    expect(words(text)).toBe(usage!.completion_tokens);
  });

  it('openai SDK, max_tokens 5: finish_reason length and exactly 5 tokens, JSON and streamed', async () => {
    const h = await start({ models: [fast('gpt-4o-mini')] });
    const r = await openai(h.url).chat.completions.create({ model: 'gpt-4o-mini', messages: user, max_tokens: 5 });
    expect(r.choices[0].finish_reason).toBe('length');
    expect(r.usage!.completion_tokens).toBe(5);
    expect(words(r.choices[0].message.content)).toBe(5);
    const final = await openai(h.url)
      .chat.completions.stream({
        model: 'gpt-4o-mini',
        messages: user,
        max_tokens: 5,
        stream_options: { include_usage: true },
      })
      .finalChatCompletion();
    expect(final.choices[0].finish_reason).toBe('length');
    expect(words(final.choices[0].message.content)).toBe(5);
    expect(final.usage!.completion_tokens).toBe(5);
  });

  it('Anthropic SDK: end_turn at a natural length under max_tokens 4096, max_tokens and 5 tokens at max_tokens 5', async () => {
    const h = await start({ models: [fast('claude-x')] });
    const c = anthropic(h.url);
    const natural = await c.messages.create({ model: 'claude-x', max_tokens: 4096, messages: user });
    expect(natural.stop_reason).toBe('end_turn');
    expect(natural.usage.output_tokens).toBeLessThan(4096);
    expect(natural.content[0].type === 'text' && words(natural.content[0].text)).toBe(natural.usage.output_tokens);
    const cut = await c.messages.create({ model: 'claude-x', max_tokens: 5, messages: user });
    expect(cut.stop_reason).toBe('max_tokens');
    expect(cut.usage.output_tokens).toBe(5);
    const streamed = await c.messages.stream({ model: 'claude-x', max_tokens: 5, messages: user }).finalMessage();
    expect(streamed.stop_reason).toBe('max_tokens');
    expect(streamed.content[0].type === 'text' && words(streamed.content[0].text)).toBe(5);
    expect(streamed.usage.output_tokens).toBe(5);
    const ends = await c.messages.stream({ model: 'claude-x', max_tokens: 4096, messages: user }).finalMessage();
    expect(ends.stop_reason).toBe('end_turn');
    expect(ends.content[0].type === 'text' && words(ends.content[0].text)).toBe(ends.usage.output_tokens);
  });

  it('Responses API: completed at a natural length, incomplete (max_output_tokens) at the limit', async () => {
    const h = await start({ models: [fast('gpt-4o-mini')] });
    const c = openai(h.url);
    const done = await c.responses.create({ model: 'gpt-4o-mini', input: 'hi', max_output_tokens: 4096 });
    expect(done.status).toBe('completed');
    expect(words(done.output_text)).toBe(done.usage!.output_tokens);
    const cut = await c.responses.create({ model: 'gpt-4o-mini', input: 'hi', max_output_tokens: 16 });
    expect(cut.status).toBe('incomplete');
    expect(cut.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(cut.usage!.output_tokens).toBe(16);
    expect(words(cut.output_text)).toBe(16);
  });

  it('n = 3: three choices, each its own length, usage their sum; streamed with their index', async () => {
    const h = await start({ models: [fast('gpt-4o-mini')] });
    const c = openai(h.url);
    const r = await c.chat.completions.create({ model: 'gpt-4o-mini', messages: user, max_tokens: 4096, n: 3 });
    expect(r.choices.map((x) => x.index)).toEqual([0, 1, 2]);
    expect(r.choices.map((x) => x.finish_reason)).toEqual(['stop', 'stop', 'stop']);
    const lengths = r.choices.map((x) => words(x.message.content));
    expect(new Set(lengths).size).toBeGreaterThan(1);
    expect(r.usage!.completion_tokens).toBe(lengths.reduce((a, b) => a + b, 0));

    const final = await c.chat.completions
      .stream({ model: 'gpt-4o-mini', messages: user, max_tokens: 6, n: 3, stream_options: { include_usage: true } })
      .finalChatCompletion();
    expect(final.choices.map((x) => [x.index, words(x.message.content), x.finish_reason])).toEqual([
      [0, 6, 'length'],
      [1, 6, 'length'],
      [2, 6, 'length'],
    ]);
    expect(final.usage!.completion_tokens).toBe(18);
    const events = sseEvents(await (await h.chat({ max_tokens: 6, n: 3, stream: true })).text());
    const indices = events.slice(0, -1).flatMap((e) => JSON.parse(e.data).choices.map((x: any) => x.index));
    expect(new Set(indices)).toEqual(new Set([0, 1, 2]));
  });

  it('n past 128 (or below 1) is a 400 naming n, as OpenAI answers it; nothing reaches the model', async () => {
    const h = await start({ models: [fast('gpt-4o-mini')] });
    const err = await openai(h.url)
      .chat.completions.create({ model: 'gpt-4o-mini', messages: user, n: 129 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      message: "Invalid 'n': integer above maximum value. Expected a value <= 128, but got 129 instead.",
      param: 'n',
      code: 'integer_above_max_value',
    });
    expect((await h.chat({ n: 0 })).status).toBe(400);
    expect((await json(h.chat({ n: 'two' }))).error.param).toBe('n');
    expect(h.count('submitted')).toBe(0);
    expect((await json(h.chat({ n: 128, max_tokens: 1 }))).choices).toHaveLength(128);
  });

  it('lengths are drawn from the seed and the request: same seed same lengths, a repeat draws anew, reset starts over', async () => {
    const lengths = async (seed: number) => {
      const h = await start({ models: [fast()] }, { seed });
      const one = async (content: string) =>
        (await json(h.chat({ max_tokens: 4096, messages: [{ role: 'user', content }] }))).usage.completion_tokens;
      const a = [await one('a'), await one('b'), await one('a')];
      await fetch(`${h.url}/_stormlab/reset`, { method: 'POST' });
      return [...a, await one('a')];
    };
    const first = await lengths(1);
    expect(await lengths(1)).toEqual(first);
    expect(first[2]).not.toBe(first[0]); // the same body again: a new draw
    expect(first[3]).toBe(first[0]); // after a reset: as at the start
    expect(await lengths(2)).not.toEqual(first);
  });

  it('a body with its own seed is answered the same length every time; another seed, another draw', async () => {
    const h = await start({ models: [fast()] });
    const one = async (body: Record<string, unknown>) =>
      (await json(h.chat({ max_tokens: 4096, ...body }))).usage.completion_tokens;
    const seeded = [await one({ seed: 7 }), await one({ seed: 7 }), await one({ seed: 7 })];
    expect(new Set(seeded).size).toBe(1);
    const others = await Promise.all([1, 2, 3, 4, 5, 6].map(async (seed) => one({ seed })));
    expect(new Set([seeded[0], ...others]).size).toBeGreaterThan(1);
    const unseeded = [await one({}), await one({}), await one({})];
    expect(new Set(unseeded).size).toBeGreaterThan(1); // a repeat draws anew
  });

  it('a model’s answerTokens sets the natural length: a number, a distribution, or max (every answer max_tokens long)', async () => {
    const h = await start({
      models: [
        fast('seven', { answerTokens: 7 }),
        fast('max', { answerTokens: 'max' }),
        fast('dist', { answerTokens: { dist: 'uniform', min: 10, max: 20 } }),
      ],
      aliases: {},
    });
    const ask = async (model: string, max_tokens: number) => {
      const r = await json(h.chat({ model, max_tokens }));
      return [r.usage.completion_tokens, r.choices[0].finish_reason];
    };
    expect(await ask('seven', 4096)).toEqual([7, 'stop']);
    expect(await ask('seven', 3)).toEqual([3, 'length']);
    expect(await ask('max', 40)).toEqual([40, 'stop']);
    const [n] = await ask('dist', 4096);
    expect(n).toBeGreaterThanOrEqual(10);
    expect(n).toBeLessThanOrEqual(20);
  });

  it('x-stormlab-output-tokens: max answers max_tokens exactly (the live driver’s rule), a number sets the natural length, else a 400', async () => {
    const h = await start({ models: [fast()] });
    const exact = await json(h.chat({ max_tokens: 333 }, length('max')));
    expect([exact.usage.completion_tokens, exact.choices[0].finish_reason]).toEqual([333, 'stop']);
    const anth = await json(h.messages({ max_tokens: 77 }, length('max')));
    expect([anth.usage.output_tokens, anth.stop_reason]).toEqual([77, 'end_turn']);
    const under = await json(h.chat({ max_tokens: 100 }, length(12)));
    expect([under.usage.completion_tokens, under.choices[0].finish_reason]).toEqual([12, 'stop']);
    const over = await json(h.chat({ max_tokens: 10 }, length(12)));
    expect([over.usage.completion_tokens, over.choices[0].finish_reason]).toEqual([10, 'length']);
    const bad = await h.chat({}, length('lots' as never));
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.message).toBe(
      'Invalid \'x-stormlab-output-tokens\' header: expected max or a number of tokens, got "lots".',
    );
  });

  it('the answer takes its own length × tpot, not max_tokens × tpot', async () => {
    const clock = new ManualClock();
    const h = await start({ models: [fast('m', { tpotMs: 1, answerTokens: 120 })] }, { clock });
    let answered = false;
    const pending = h.chat({ max_tokens: 4096 }).then(async (r) => {
      answered = true;
      return json(r);
    });
    await h.waitFor('submitted');
    clock.advance(119);
    await new Promise((r) => setImmediate(r));
    expect(h.count('answered')).toBe(0);
    clock.advance(1);
    const body = await pending;
    expect(answered).toBe(true);
    expect([body.usage.completion_tokens, body.choices[0].finish_reason]).toEqual([120, 'stop']);
  });

  it('a tool call runs as long as its arguments, not to max_tokens', async () => {
    const h = await start({ models: [fast()] });
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }];
    const r = await json(h.chat({ max_tokens: 4096, tools, messages: USER }));
    expect(r.choices[0].finish_reason).toBe('tool_calls');
    const call = r.choices[0].message.tool_calls[0].function;
    expect(r.usage.completion_tokens).toBe(Math.ceil((call.name.length + call.arguments.length) / 3));
  });
});
