import { describe, expect, it } from 'vitest';
import { fast, json, sseEvents, start, USER } from './harness.js';

const WEATHER = {
  type: 'object',
  properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } },
  required: ['city', 'unit'],
  additionalProperties: false,
};
const openaiTools = [
  { type: 'function', function: { name: 'get_weather', parameters: WEATHER } },
  { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
];
const anthropicTools = [{ name: 'get_weather', input_schema: WEATHER }];

describe('fake upstream: tool calls', () => {
  it('OpenAI: calls a tool with schema-valid arguments, then answers the tool result with text', async () => {
    const h = await start({ models: [fast()] });
    const first = await json(h.chat({ tools: openaiTools }));
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    const call = first.choices[0].message.tool_calls[0];
    expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
    expect(call.id).toMatch(/^call_/);
    const args = JSON.parse(call.function.arguments);
    expect(['c', 'f']).toContain(args.unit);
    expect(typeof args.city).toBe('string');
    const messages = [...USER, first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: 'sunny' }];
    const second = await json(h.chat({ tools: openaiTools, messages }));
    expect(second.choices[0].finish_reason).toBe('stop');
    expect(second.choices[0].message.content).toContain('sunny');
  });

  it('the same request gets the same call but for its id (deterministic per seed), another seed other arguments', async () => {
    const a = await start({ models: [fast()] }, { seed: 1 });
    const b = await start({ models: [fast()] }, { seed: 2 });
    const call = async (h: typeof a) => (await json(h.chat({ tools: openaiTools }))).choices[0].message.tool_calls[0];
    const [first, again] = [await call(a), await call(a)];
    expect(first.id).not.toBe(again.id);
    expect({ ...first, id: '' }).toEqual({ ...again, id: '' });
    const seeds = await Promise.all([call(a), call(b)]);
    expect(seeds[0].function.arguments).not.toBe(seeds[1].function.arguments);
  });

  it('honours tool_choice: none answers text, required and a forced function always call', async () => {
    const h = await start({ models: [fast()] }, { toolPolicy: { rounds: 0 } });
    expect((await json(h.chat({ tools: openaiTools, max_tokens: 4096 }))).choices[0].finish_reason).toBe('stop');
    const none = await json(h.chat({ tools: openaiTools, tool_choice: 'none' }));
    expect(none.choices[0].message.tool_calls).toBeUndefined();
    expect((await json(h.chat({ tools: openaiTools, tool_choice: 'required' }))).choices[0].finish_reason).toBe(
      'tool_calls',
    );
    const forced = await json(
      h.chat({ tools: openaiTools, tool_choice: { type: 'function', function: { name: 'get_time' } } }),
    );
    expect(forced.choices[0].message.tool_calls.map((c: any) => c.function.name)).toEqual(['get_time']);
  });

  it('the tool policy: N tool turns then the answer, parallel calls, set by the control API', async () => {
    const h = await start({ models: [fast()] });
    const put = await fetch(`${h.url}/_stormlab/tool-policy`, {
      method: 'PUT',
      body: JSON.stringify({ rounds: 2, parallel: 2 }),
    });
    expect(await json(put)).toEqual({ rounds: 2, parallel: 2, pick: 'cycle' });
    const messages: any[] = [...USER];
    const turns: string[][] = [];
    for (let i = 0; i < 5; i++) {
      const r = await json(h.chat({ tools: openaiTools, messages }));
      const m = r.choices[0].message;
      messages.push(m);
      if (!m.tool_calls) break;
      turns.push(m.tool_calls.map((c: any) => c.function.name));
      for (const c of m.tool_calls) messages.push({ role: 'tool', tool_call_id: c.id, content: 'ok' });
    }
    expect(turns).toEqual([
      ['get_weather', 'get_time'],
      ['get_weather', 'get_time'],
    ]);
    expect(messages[messages.length - 1].content).toContain('ok');
    const bad = await fetch(`${h.url}/_stormlab/tool-policy`, { method: 'PUT', body: JSON.stringify({ rounds: -1 }) });
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.message).toBe('toolPolicy.rounds: expected an integer from 0 to 100, got -1');
  });

  it('OpenAI streamed: delta.tool_calls chunks carry the id and name first, then argument pieces', async () => {
    const h = await start({ models: [fast()] });
    const text = await (await h.chat({ tools: openaiTools, stream: true, max_tokens: 64 })).text();
    const chunks = sseEvents(text)
      .filter((e) => e.data !== '[DONE]')
      .map((e) => JSON.parse(e.data));
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(deltas[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'get_weather', arguments: '' } });
    expect(deltas.length).toBeGreaterThan(2);
    const args = deltas.map((d: any) => d.function.arguments).join('');
    expect(Object.keys(JSON.parse(args)).sort()).toEqual(['city', 'unit']);
    expect(chunks[chunks.length - 1].choices[0].finish_reason).toBe('tool_calls');
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('response_format json_schema and json_object answer JSON; a cut at max_tokens says length', async () => {
    const h = await start({ models: [fast()] });
    const schema = await json(
      h.chat({ response_format: { type: 'json_schema', json_schema: { name: 'w', schema: WEATHER, strict: true } } }),
    );
    expect(Object.keys(JSON.parse(schema.choices[0].message.content)).sort()).toEqual(['city', 'unit']);
    const object = await json(h.chat({ response_format: { type: 'json_object' } }));
    expect(typeof JSON.parse(object.choices[0].message.content)).toBe('object');
    const cut = await json(
      h.chat({ max_tokens: 2, response_format: { type: 'json_schema', json_schema: { name: 'w', schema: WEATHER } } }),
    );
    expect(cut.choices[0].finish_reason).toBe('length');
    expect(() => JSON.parse(cut.choices[0].message.content)).toThrow();
  });

  it('Anthropic: tool_use with valid input, stop_reason tool_use, a tool_result answered with text', async () => {
    const h = await start({ models: [fast()] });
    const first = await json(h.messages({ tools: anthropicTools, max_tokens: 200 }));
    expect(first.stop_reason).toBe('tool_use');
    const use = first.content[0];
    expect(use).toMatchObject({
      type: 'tool_use',
      name: 'get_weather',
      input: { unit: expect.stringMatching(/^[cf]$/) },
    });
    const messages = [
      ...USER,
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'rainy' }] },
    ];
    const second = await json(h.messages({ tools: anthropicTools, messages, max_tokens: 200 }));
    expect(second.stop_reason).toBe('end_turn');
    expect(second.content[0].text).toContain('rainy');
  });

  it('Anthropic streamed: content_block_start tool_use, input_json_delta pieces, message_delta tool_use', async () => {
    const h = await start({ models: [fast()] });
    const res = await h.messages({
      tools: anthropicTools,
      stream: true,
      max_tokens: 200,
      tool_choice: { type: 'any' },
    });
    const events = sseEvents(await res.text());
    const data = events.map((e) => JSON.parse(e.data));
    expect(data.find((d) => d.type === 'content_block_start').content_block).toMatchObject({
      type: 'tool_use',
      input: {},
    });
    const json_ = data
      .filter((d) => d.type === 'content_block_delta')
      .map((d) => d.delta.partial_json)
      .join('');
    expect(Object.keys(JSON.parse(json_)).sort()).toEqual(['city', 'unit']);
    expect(data.find((d) => d.type === 'message_delta').delta.stop_reason).toBe('tool_use');
    expect(events[events.length - 1].event).toBe('message_stop');
  });

  it('Anthropic output_config.format json_schema answers JSON text', async () => {
    const h = await start({ models: [fast()] });
    const r = await json(
      h.messages({ output_config: { format: { type: 'json_schema', schema: WEATHER } }, max_tokens: 200 }),
    );
    expect(Object.keys(JSON.parse(r.content[0].text)).sort()).toEqual(['city', 'unit']);
  });
});
