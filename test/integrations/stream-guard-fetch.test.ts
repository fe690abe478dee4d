import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { guardedFetch, type GuardedFetchOptions } from '../../src/integrations/guarded-fetch.js';
import { FINISH_GRACE_MS } from '../../src/engine/stream-watch.js';
import {
  anthropicEnd,
  anthropicStart,
  anthropicText,
  delta,
  engineSetup,
  openaiStream,
  roleChunk,
  until,
  useScriptedServers,
} from './scripted-server.js';

const serve = useScriptedServers();

function openai(origin: string, options: GuardedFetchOptions) {
  const f = guardedFetch(options);
  return { f, client: new OpenAI({ apiKey: 'test', baseURL: `${origin}/v1`, maxRetries: 0, fetch: f }) };
}

const ask = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Capital of France?' }] };

/** Reads an OpenAI SDK stream; returns the text and the error that ended it, if any. `seen` follows it. */
async function read(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>, seen = { text: '' }) {
  try {
    for await (const c of stream) seen.text += c.choices[0]?.delta?.content ?? '';
  } catch (error) {
    return { text: seen.text, error };
  }
  return { text: seen.text, error: undefined };
}

describe('the stream guard through guardedFetch and the OpenAI SDK', () => {
  it('a cut after the first token ends the SDK stream with an APIError (stream_cut), not a clean end', async () => {
    const s = await serve([{ sse: [roleChunk, delta('Par')], cut: true }, { sse: openaiStream('never') }]);
    const { base, run, of } = engineSetup();
    const { client } = openai(s.origin, { ...base, targets: [s.origin] });
    const { text, error } = await run(read(await run(client.chat.completions.create({ ...ask, stream: true }))));
    expect(text).toBe('Par');
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error).toMatchObject({ code: 'stream_cut' });
    expect(s.requests).toHaveLength(1);
    expect(of('retry')).toEqual([]);
  });

  it('a finish without [DONE] on a clean close is a complete answer', async () => {
    const s = await serve([{ sse: [roleChunk, delta('Paris.'), delta('', 'stop')] }]);
    const { base, run } = engineSetup();
    const { client } = openai(s.origin, { ...base, targets: [s.origin] });
    const got = await run(read(await run(client.chat.completions.create({ ...ask, stream: true }))));
    expect(got).toEqual({ text: 'Paris.', error: undefined });
  });

  it('a finish without [DONE] on a connection left open is finalised after a short quiet', async () => {
    const s = await serve([{ sse: [roleChunk, delta('Paris.'), delta('', 'stop')], stall: true }]);
    const { base, clock } = engineSetup();
    const { client } = openai(s.origin, { ...base, targets: [s.origin], stream: { ...base.stream, idleMs: 15_000 } });
    const stream = await client.chat.completions.create({ ...ask, stream: true });
    let done = false;
    const seen = { text: '' };
    const reading = read(stream, seen).then((r) => ((done = true), r));
    // The SDK has the text; the guard waits on the upstream (after the finish: the short quiet).
    await until(() => seen.text === 'Paris.' && clock.nextTimerAt() === clock.now() + FINISH_GRACE_MS);
    clock.advance(FINISH_GRACE_MS);
    await until(() => done);
    expect(await reading).toEqual({ text: 'Paris.', error: undefined });
  });

  it('skips and counts a malformed event; the SDK reads the rest', async () => {
    const s = await serve([
      { sse: [roleChunk, delta('Par'), '{"choices":[{"delta":{"cont', delta('is.'), delta('', 'stop'), '[DONE]'] },
    ]);
    const { base, run } = engineSetup();
    const { client, f } = openai(s.origin, { ...base, targets: [s.origin] });
    const got = await run(read(await run(client.chat.completions.create({ ...ask, stream: true }))));
    expect(got).toEqual({ text: 'Paris.', error: undefined });
    expect(f.streams.malformed).toBe(1);
  });

  it('a stall after the first token ends the stream at idleMs with an in-band stream_stall error', async () => {
    const s = await serve([{ sse: [roleChunk, delta('Par')], stall: true }]);
    const { base, clock, of } = engineSetup();
    const { client } = openai(s.origin, { ...base, targets: [s.origin], stream: { ...base.stream, idleMs: 5000 } });
    const stream = await client.chat.completions.create({ ...ask, stream: true });
    let done = false;
    const seen = { text: '' };
    const reading = read(stream, seen).then((r) => ((done = true), r));
    await until(() => seen.text === 'Par' && clock.nextTimerAt() === clock.now() + 5000);
    clock.advance(4999);
    await new Promise((r) => setImmediate(r));
    expect(done).toBe(false);
    clock.advance(1);
    await until(() => done);
    const { text, error } = await reading;
    expect(text).toBe('Par');
    expect(error).toMatchObject({ code: 'stream_stall' });
    expect(of('retry')).toEqual([]);
  });

  it('passes a whole stream through byte for byte and says which target answered', async () => {
    const s = await serve([{ sse: openaiStream('Paris.') }]);
    const { base, run } = engineSetup();
    const { f } = openai(s.origin, { ...base, targets: [s.origin] });
    const res = await run(
      f(`${s.origin}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ ...ask, stream: true }) }),
    );
    expect(res.headers.get('x-stormlab-target')).toBe(s.origin);
    const body = await run(res.text());
    expect(body).toBe(
      openaiStream('Paris.')
        .map((e) => `data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`)
        .join(''),
    );
  });

  it('the Responses API event stream completes through the SDK', async () => {
    const ev = (type: string, body: Record<string, unknown>) =>
      `event: ${type}\ndata: ${JSON.stringify({ type, ...body })}\n\n`;
    const response = { id: 'resp_1', object: 'response', status: 'completed', output: [], model: 'gpt-4o-mini' };
    const s = await serve([
      {
        events: [
          ev('response.created', { response: { ...response, status: 'in_progress' }, sequence_number: 0 }),
          ev('response.output_text.delta', {
            item_id: 'm',
            output_index: 0,
            content_index: 0,
            delta: 'Paris.',
            sequence_number: 1,
          }),
          ev('response.completed', { response, sequence_number: 2 }),
        ],
      },
    ]);
    const { base, run } = engineSetup();
    const { client } = openai(s.origin, { ...base, targets: [s.origin] });
    const stream = await run(
      client.responses.create({ model: 'gpt-4o-mini', input: 'Capital of France?', stream: true }),
    );
    const types: string[] = [];
    await run(
      (async () => {
        for await (const e of stream) types.push(e.type);
      })(),
    );
    expect(types).toEqual(['response.created', 'response.output_text.delta', 'response.completed']);
  });
});

describe('the stream guard through guardedFetch and the Anthropic SDK', () => {
  it('a cut after the first token ends the SDK stream with an APIError from an event: error', async () => {
    const s = await serve([{ events: [...anthropicStart(), anthropicText('Par')], cut: true }]);
    const { base, run } = engineSetup();
    const client = new Anthropic({
      apiKey: 'test',
      baseURL: s.origin,
      maxRetries: 0,
      fetch: guardedFetch({ ...base, targets: [s.origin] }),
    });
    const stream = await run(
      client.messages.create({
        model: 'claude-3-5-haiku-latest',
        max_tokens: 50,
        messages: [{ role: 'user', content: 'Capital of France?' }],
        stream: true,
      }),
    );
    let text = '';
    const error = await run(
      (async () => {
        for await (const e of stream)
          if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text;
      })(),
    ).catch((e: unknown) => e);
    expect(text).toBe('Par');
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect(String((error as Error).message)).toContain('stream_cut');
  });

  it('a whole Anthropic stream reads as it came', async () => {
    const s = await serve([{ events: [...anthropicStart(), anthropicText('Paris.'), ...anthropicEnd()] }]);
    const { base, run } = engineSetup();
    const client = new Anthropic({
      apiKey: 'test',
      baseURL: s.origin,
      maxRetries: 0,
      fetch: guardedFetch({ ...base, targets: [s.origin] }),
    });
    const message = await run(
      client.messages
        .stream({ model: 'claude-3-5-haiku-latest', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] })
        .finalMessage(),
    );
    expect(message.content).toEqual(
      [{ type: 'text', text: 'Paris.', citations: undefined }].map(({ type, text }) => ({ type, text })),
    );
  });
});
