import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import type { GuardEvent } from '../../src/engine/guard-events.js';
import { SeededRandom } from '../../src/engine/random.js';
import type { FaultPhaseInput } from '../../src/fake-upstream/fault-phases.js';
import { fillerText } from '../../src/fake-upstream/filler-text.js';
import { createFakeUpstream, type FakeUpstream } from '../../src/fake-upstream/server.js';
import { guardedFetch, type GuardedFetchOptions } from '../../src/integrations/guarded-fetch.js';
import { stormlab } from '../../src/integrations/undici-interceptor.js';

// Continuation end to end (issue 25, item 4): a stream cut at token 40 through the official SDKs
// with guardedFetch in front of `stormlab serve`'s upstream, whose fallback model declares
// `continuation: prefill`, reaches the SDK as ONE complete answer: the uncut answer's first 40
// words, then the continuation — no repeated and no missing text.

const open: FakeUpstream[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

const model = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  slots: 8,
  queue: 8,
  ttftMs: 5,
  tpotMs: 0,
  ...extra,
});

/** serve with `primary` (cut after 40 tokens unless told otherwise) and `fallback`, the latter declaring continuation. */
async function upstream(
  faults: FaultPhaseInput[] = [{ kind: 'cut', model: 'primary', afterTokens: 40 }],
  primary: Record<string, unknown> = {},
) {
  const fu = await createFakeUpstream({
    upstream: {
      models: [model('primary', primary), model('fallback', { continuation: 'prefill' })],
      faults,
    },
    random: new SeededRandom(5),
    unknownModels: 'reject',
  });
  open.push(fu);
  return fu;
}

/** Every answer 60 words long (its natural length), so the uncut answer is fillerText(0, 60). */
const SIXTY = { 'x-stormlab-output-tokens': '60' };
const WHOLE = fillerText(0, 60);

function options(
  fu: FakeUpstream,
  events: GuardEvent[],
  extra: Partial<GuardedFetchOptions> = {},
): GuardedFetchOptions {
  return {
    targets: [
      { name: 'primary', origin: fu.url, model: 'primary' },
      { name: 'fallback', origin: fu.url, model: 'fallback', continuation: 'prefill' },
    ],
    onEvent: (e) => events.push(e),
    stream: { headersTimeoutMs: 2_000, firstTokenMs: 2_000, idleMs: 1_000 },
    ...extra,
  };
}

const ask = { model: 'primary', max_tokens: 500, messages: [{ role: 'user' as const, content: 'Tell me of storms.' }] };

describe('stream.resume through the official OpenAI SDK against stormlab serve', () => {
  it('a cut at token 40 reaches the SDK as one complete answer: the uncut prefix, then the rest', async () => {
    const fu = await upstream();
    const events: GuardEvent[] = [];
    const client = new OpenAI({
      apiKey: 'test',
      baseURL: `${fu.url}/v1`,
      maxRetries: 0,
      fetch: guardedFetch(options(fu, events)),
      defaultHeaders: SIXTY,
    });
    const stream = await client.chat.completions.create({
      ...ask,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null | undefined;
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const c of stream) {
      chunks.push(c);
      text += c.choices[0]?.delta?.content ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe(WHOLE);
    expect(finish).toBe('stop');
    // One role chunk: the continuation's opening was not handed over again.
    expect(chunks.filter((c) => c.choices[0]?.delta?.role !== undefined)).toHaveLength(1);
    // The resumption is marked on the usage chunk, its prefill's cost beside the usage.
    const last = chunks.at(-1) as unknown as Record<string, unknown>;
    expect(last.stormlab_resume).toEqual({ resumptions: 1, prefill_tokens: Math.ceil(fillerText(0, 40).length / 3) });
    const usage = last.usage as { completion_tokens: number; prompt_tokens: number };
    // The continuation's 20 tokens plus the delivered text (the cut stream reported no usage: estimated).
    expect(usage.completion_tokens).toBe(20 + Math.ceil(fillerText(0, 40).length / 3));
    // The engine's view: one resume event, the second attempt on the declaring fallback.
    expect(events.filter((e) => e.type === 'resume')).toEqual([
      expect.objectContaining({ target: 'primary', class: 'stream_cut' }),
    ]);
    const log = fu.requests();
    expect(log.map((r) => r.model)).toEqual(['primary', 'fallback']);
  });

  it('the fallback gets the caller request plus the delivered text as a trailing assistant message', async () => {
    const fu = await upstream();
    const seen: unknown[] = [];
    const spy: typeof fetch = async (input, init) => {
      seen.push(JSON.parse(String(init?.body)));
      return fetch(input, init);
    };
    const client = new OpenAI({
      apiKey: 'test',
      baseURL: `${fu.url}/v1`,
      maxRetries: 0,
      fetch: guardedFetch({ ...options(fu, []), fetch: spy }),
      defaultHeaders: SIXTY,
    });
    let text = '';
    for await (const c of await client.chat.completions.create({ ...ask, stream: true }))
      text += c.choices[0]?.delta?.content ?? '';
    expect(text).toBe(WHOLE);
    expect(seen).toHaveLength(2);
    const [first, second] = seen as Array<{ model: string; messages: unknown[] }>;
    expect(second).toEqual({
      ...first,
      model: 'fallback',
      messages: [...first.messages, { role: 'assistant', content: fillerText(0, 40) }],
    });
  });

  it('a prefill the declaring target rejects (400) is never the caller error: it gets the original cut', async () => {
    const fu = await upstream([
      { kind: 'cut', model: 'primary', afterTokens: 40 },
      { kind: 'prefill-rejected', model: 'fallback' },
    ]);
    const client = new OpenAI({
      apiKey: 'test',
      baseURL: `${fu.url}/v1`,
      maxRetries: 0,
      fetch: guardedFetch(options(fu, [])),
      defaultHeaders: SIXTY,
    });
    let text = '';
    const err = await (async () => {
      try {
        for await (const c of await client.chat.completions.create({ ...ask, stream: true }))
          text += c.choices[0]?.delta?.content ?? '';
      } catch (e) {
        return e;
      }
    })();
    expect(text).toBe(fillerText(0, 40));
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(JSON.stringify((err as InstanceType<typeof OpenAI.APIError>).error)).toContain('stream_cut');
    expect(fu.requests().map((r) => [r.model, r.status])).toEqual([
      ['primary', 200],
      ['fallback', 400],
    ]);
  });

  it('no declaring target, or resume: false: never a prefill, the in-band error as before', async () => {
    for (const extra of [{ stream: { idleMs: 1_000, resume: false } }, {}]) {
      const fu = await upstream();
      const o = options(fu, [], extra);
      const targets =
        'stream' in extra ? o.targets : [o.targets![0], { name: 'fallback', origin: fu.url, model: 'fallback' }];
      const client = new OpenAI({
        apiKey: 'test',
        baseURL: `${fu.url}/v1`,
        maxRetries: 0,
        fetch: guardedFetch({ ...o, targets }),
        defaultHeaders: SIXTY,
      });
      let text = '';
      await expect(
        (async () => {
          for await (const c of await client.chat.completions.create({ ...ask, stream: true }))
            text += c.choices[0]?.delta?.content ?? '';
        })(),
      ).rejects.toThrow(/stream_cut|stream closed/);
      expect(text).toBe(fillerText(0, 40));
      expect(fu.requests().map((r) => r.model)).toEqual(['primary']);
    }
  });

  it('a tool-call stream is never continued: it ends with the in-band error, no prefill sent', async () => {
    const fu = await upstream([{ kind: 'cut', model: 'primary', afterTokens: 3 }]);
    const client = new OpenAI({
      apiKey: 'test',
      baseURL: `${fu.url}/v1`,
      maxRetries: 0,
      fetch: guardedFetch(options(fu, [])),
    });
    const tools = [
      {
        type: 'function' as const,
        function: {
          name: 'lookup',
          parameters: {
            type: 'object',
            properties: { query: { type: 'string', minLength: 40 }, note: { type: 'string', minLength: 40 } },
            required: ['query', 'note'],
          },
        },
      },
    ];
    let args = '';
    await expect(
      (async () => {
        for await (const c of await client.chat.completions.create({
          ...ask,
          tools,
          tool_choice: 'required',
          stream: true,
        }))
          args += c.choices[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? '';
      })(),
    ).rejects.toThrow(/stream_cut|stream closed/);
    // The arguments had reached the caller (committed), and no prefill followed them.
    expect(args.length).toBeGreaterThan(0);
    expect(fu.requests().map((r) => r.model)).toEqual(['primary']);
  });

  it('a continuation cut in its turn is continued again: one answer, the resumptions counted', async () => {
    const fu = await upstream([{ kind: 'cut', model: 'primary', afterTokens: 15 }], { continuation: 'prefill' });
    const o = options(fu, []);
    const client = new OpenAI({
      apiKey: 'test',
      baseURL: `${fu.url}/v1`,
      maxRetries: 0,
      fetch: guardedFetch({
        ...o,
        targets: [{ name: 'primary', origin: fu.url, model: 'primary', continuation: 'prefill' }],
      }),
      defaultHeaders: { 'x-stormlab-output-tokens': '40' },
    });
    let text = '';
    let mark: unknown;
    for await (const c of await client.chat.completions.create({ ...ask, stream: true })) {
      text += c.choices[0]?.delta?.content ?? '';
      mark = (c as unknown as { stormlab_resume?: unknown }).stormlab_resume ?? mark;
    }
    expect(text).toBe(fillerText(0, 40));
    expect(mark).toMatchObject({ resumptions: 2 });
    expect(fu.requests().map((r) => r.model)).toEqual(['primary', 'primary', 'primary']);
  });

  it('the same target first when it declares continuation itself', async () => {
    const fu = await upstream([{ kind: 'cut', model: 'primary', afterTokens: 40 }], { continuation: 'prefill' });
    const o = options(fu, []);
    const client = new OpenAI({
      apiKey: 'test',
      baseURL: `${fu.url}/v1`,
      maxRetries: 0,
      fetch: guardedFetch({
        ...o,
        targets: [{ name: 'primary', origin: fu.url, model: 'primary', continuation: 'prefill' }, o.targets![1]],
      }),
      defaultHeaders: SIXTY,
    });
    let text = '';
    for await (const c of await client.chat.completions.create({ ...ask, stream: true }))
      text += c.choices[0]?.delta?.content ?? '';
    expect(text).toBe(WHOLE);
    expect(fu.requests().map((r) => r.model)).toEqual(['primary', 'primary']);
  });
});

describe('stream.resume through the official Anthropic SDK against stormlab serve', () => {
  it('a cut at token 40 reaches the SDK as one complete message: the uncut prefix, then the rest', async () => {
    const fu = await upstream();
    const events: GuardEvent[] = [];
    const client = new Anthropic({
      apiKey: 'test',
      baseURL: fu.url,
      maxRetries: 0,
      fetch: guardedFetch(options(fu, events)),
      defaultHeaders: SIXTY,
    });
    const stream = client.messages.stream(ask);
    const deltas: string[] = [];
    stream.on('text', (t) => deltas.push(t));
    const message = await stream.finalMessage();
    const text = message.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    expect(text).toBe(WHOLE);
    expect(deltas.join('')).toBe(WHOLE);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.content).toHaveLength(1);
    expect(events.filter((e) => e.type === 'resume')).toHaveLength(1);
    expect(fu.requests().map((r) => r.model)).toEqual(['primary', 'fallback']);
  });
});

describe('the undici interceptor and continuation', () => {
  it('refuses a target that declares continuation (it does not resume yet) instead of ignoring it', () => {
    expect(() => stormlab({ targets: [{ name: 'a', origin: 'http://127.0.0.1:1', continuation: 'prefill' }] })).toThrow(
      'targets[0].continuation: the undici interceptor does not resume streams yet (guardedFetch does)',
    );
  });
});
