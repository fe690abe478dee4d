import OpenAI from 'openai';
import { zodResponseFormat, zodTextFormat } from 'openai/helpers/zod';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isWeatherArgs, TOOL_RESULT, useCompatUpstream, WEATHER_SCHEMA, WIRINGS } from './compat-upstream.js';

const up = useCompatUpstream();
const MODEL = 'gpt-4o-mini';
const weather = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather for a city', parameters: WEATHER_SCHEMA, strict: true },
};
const Answer = z.object({ city: z.string(), score: z.number().int().min(0).max(10), tags: z.array(z.string()) });

describe.each(WIRINGS)('openai SDK (%s)', (wiring) => {
  const client = () => new OpenAI({ baseURL: `${up.fu().url}/v1`, apiKey: 'test', fetch: up.fetchFor(wiring) });

  it('chat: a completion for a real model name', async () => {
    const r = await client().chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    expect(r.model).toBe(MODEL);
    expect(r.choices[0].finish_reason).toBe('stop');
    expect(r.choices[0].message.content?.length).toBeGreaterThan(0);
  });

  it('stream: chunks add up to text, then the stream ends', async () => {
    const stream = await client().chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 20,
      stream: true,
    });
    let text = '';
    let finish: string | null = null;
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    expect(text.split(' ')).toHaveLength(20);
    expect(finish).toBe('length'); // cut at max_tokens: 20
  });

  it('tools: a two-step loop, arguments valid against the schema, then a final answer', async () => {
    const c = client();
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const calls: unknown[] = [];
    for (let step = 0; step < 5; step++) {
      const r = await c.chat.completions.create({ model: MODEL, messages, tools: [weather] });
      const m = r.choices[0].message;
      messages.push(m);
      if (r.choices[0].finish_reason !== 'tool_calls') break;
      for (const call of m.tool_calls ?? []) {
        if (call.type !== 'function') continue;
        calls.push(JSON.parse(call.function.arguments));
        messages.push({ role: 'tool', tool_call_id: call.id, content: TOOL_RESULT });
      }
    }
    expect(calls).toHaveLength(1);
    expect(calls.every(isWeatherArgs)).toBe(true);
    const last = messages[messages.length - 1] as OpenAI.ChatCompletionMessage;
    expect(last.role).toBe('assistant');
    expect(last.content).toContain(TOOL_RESULT);
  });

  it('tools, streamed: delta.tool_calls chunks assemble into the call (runTools helper)', async () => {
    const seen: unknown[] = [];
    const runner = client().chat.completions.runTools({
      model: MODEL,
      stream: true,
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Weather for a city',
            parameters: WEATHER_SCHEMA as unknown as Record<string, unknown>,
            function: (args: unknown) => {
              seen.push(args);
              return TOOL_RESULT;
            },
            parse: JSON.parse,
          },
        },
      ],
    });
    const final = await runner.finalContent();
    expect(seen).toHaveLength(1);
    expect(isWeatherArgs(seen[0])).toBe(true);
    expect(final).toContain(TOOL_RESULT);
  });

  it('structured output: chat.completions.parse with a zod response_format', async () => {
    const r = await client().chat.completions.parse({
      model: MODEL,
      messages: [{ role: 'user', content: 'Rate Paris' }],
      response_format: zodResponseFormat(Answer, 'answer'),
    });
    expect(Answer.safeParse(r.choices[0].message.parsed).success).toBe(true);
  });

  it('Responses API: text, a function-call loop, structured text.format, and a stream', async () => {
    const c = client();
    const text = await c.responses.create({ model: MODEL, input: 'hi' });
    expect(text.status).toBe('completed');
    expect(text.output_text.length).toBeGreaterThan(0);

    const tools: OpenAI.Responses.Tool[] = [
      { type: 'function', name: 'get_weather', parameters: WEATHER_SCHEMA as never, strict: true },
    ];
    const first = await c.responses.create({ model: MODEL, input: 'Weather in Paris?', tools });
    const call = first.output.find((o) => o.type === 'function_call');
    expect(call?.type === 'function_call' && isWeatherArgs(JSON.parse(call.arguments))).toBe(true);
    if (call?.type !== 'function_call') return;
    const second = await c.responses.create({
      model: MODEL,
      tools,
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        call,
        { type: 'function_call_output', call_id: call.call_id, output: TOOL_RESULT },
      ],
    });
    expect(second.output_text).toContain(TOOL_RESULT);

    const parsed = await c.responses.parse({
      model: MODEL,
      input: 'Rate Paris',
      text: { format: zodTextFormat(Answer, 'answer') },
    });
    expect(Answer.safeParse(parsed.output_parsed).success).toBe(true);

    const events: string[] = [];
    const stream = await c.responses.create({ model: MODEL, input: 'hi', stream: true });
    for await (const e of stream) events.push(e.type);
    expect(events[0]).toBe('response.created');
    expect(events).toContain('response.output_text.delta');
    expect(events[events.length - 1]).toBe('response.completed');
  });

  it('Responses API state: a tools loop by previous_response_id, retrieve and delete, an unknown id a 400', async () => {
    const c = client();
    const tools: OpenAI.Responses.Tool[] = [
      { type: 'function', name: 'get_weather', parameters: WEATHER_SCHEMA as never, strict: true },
    ];
    let r = await c.responses.create({ model: MODEL, input: 'Weather in Paris?', tools });
    expect((r as unknown as { store: boolean }).store).toBe(true);
    const calls: unknown[] = [];
    // The loop sends only what is new: the outputs of the calls, on the previous response.
    for (let turn = 0; turn < 4 && r.output.some((o) => o.type === 'function_call'); turn++) {
      const input: OpenAI.Responses.ResponseInputItem[] = [];
      for (const o of r.output) {
        if (o.type !== 'function_call') continue;
        calls.push(JSON.parse(o.arguments));
        input.push({ type: 'function_call_output', call_id: o.call_id, output: TOOL_RESULT });
      }
      const previous = r.id;
      r = await c.responses.create({ model: MODEL, previous_response_id: previous, input, tools });
      expect(r.previous_response_id).toBe(previous);
    }
    expect(calls).toHaveLength(1);
    expect(isWeatherArgs(calls[0])).toBe(true);
    expect(r.output_text).toContain(TOOL_RESULT);

    // The items the last answer answered: the question, the call, its output — paged by the SDK.
    const items: OpenAI.Responses.ResponseItem[] = [];
    for await (const item of c.responses.inputItems.list(r.id, { order: 'asc', limit: 1 })) items.push(item);
    expect(items.map((i) => i.type)).toEqual(['message', 'function_call', 'function_call_output']);
    expect(new Set(items.map((i) => i.id)).size).toBe(3);

    expect(await c.responses.retrieve(r.id)).toEqual(r);
    await c.responses.delete(r.id);
    await expect(c.responses.retrieve(r.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const unknown = await c.responses
      .create({ model: MODEL, previous_response_id: r.id, input: 'and then?' })
      .catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(OpenAI.BadRequestError);
    expect(unknown).toMatchObject({ status: 400, param: 'previous_response_id', code: 'previous_response_not_found' });
  });

  it('embeddings: one vector per input (the SDK asks for base64 and decodes it)', async () => {
    const r = await client().embeddings.create({ model: 'text-embedding-3-small', input: ['a', 'b'] });
    expect(r.data.map((d) => d.embedding.length)).toEqual([1536, 1536]);
    const norm = Math.hypot(...r.data[0].embedding);
    expect(norm).toBeCloseTo(1, 3);
  });

  up.checkWiring(wiring);
});
