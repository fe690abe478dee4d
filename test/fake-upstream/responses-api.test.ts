import { describe, expect, it } from 'vitest';
import { fast, json, length, sseEvents, start } from './harness.js';

const tools = [
  {
    type: 'function',
    name: 'lookup',
    parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  },
];

describe('fake upstream: the Responses API and embeddings', () => {
  it('answers a response object with an output_text message and usage', async () => {
    const h = await start({ models: [fast()] });
    const r = await json(
      h.post('/v1/responses', { model: 'gpt-4o-mini', input: 'hi', max_output_tokens: 4096 }, length(20)),
    );
    expect(r).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'gpt-4o-mini',
      incomplete_details: null,
    });
    expect(r.id).toMatch(/^resp_/);
    expect(r.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'completed' });
    expect(r.output[0].content[0].text.split(' ')).toHaveLength(20);
    expect(r.usage).toMatchObject({ output_tokens: 20, total_tokens: r.usage.input_tokens + 20 });
  });

  it('calls a function, then answers its function_call_output; an item_reference to the call counts as the call', async () => {
    const h = await start({ models: [fast()] });
    const first = await json(h.post('/v1/responses', { model: 'm', input: 'find', tools }));
    const call = first.output[0];
    expect(call).toMatchObject({ type: 'function_call', name: 'lookup', status: 'completed' });
    expect(typeof JSON.parse(call.arguments).q).toBe('string');
    const output = { type: 'function_call_output', call_id: call.call_id, output: 'found it' };
    const second = await json(
      h.post('/v1/responses', { model: 'm', tools, input: [{ role: 'user', content: 'find' }, call, output] }),
    );
    expect(second.output[0].content[0].text).toContain('found it');
    const byRef = await json(
      h.post('/v1/responses', {
        model: 'm',
        tools,
        input: [{ role: 'user', content: 'find' }, { type: 'item_reference', id: call.id }, output],
      }),
    );
    expect(byRef.output[0].type).toBe('message');
  });

  it('streams response.created … output_text.delta … response.completed, numbered in order', async () => {
    const h = await start({ models: [fast()] });
    const res = await h.post('/v1/responses', { model: 'm', input: 'hi', stream: true }, length(32));
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = sseEvents(await res.text()).map((e) => ({ event: e.event, ...JSON.parse(e.data) }));
    expect(events.map((e) => e.type).filter((t, i, a) => a.indexOf(t) === i)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.every((e) => e.event === e.type)).toBe(true);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const text = events
      .filter((e) => e.type === 'response.output_text.delta')
      .map((e) => e.delta)
      .join('');
    expect(events[events.length - 1].response.output[0].content[0].text).toBe(text);
  });

  it('streams function_call items with function_call_arguments.delta; text.format json_schema answers JSON', async () => {
    const h = await start({ models: [fast()] });
    const res = await h.post('/v1/responses', { model: 'm', input: 'find', tools, stream: true });
    const events = sseEvents(await res.text()).map((e) => JSON.parse(e.data));
    const args = events
      .filter((e) => e.type === 'response.function_call_arguments.delta')
      .map((e) => e.delta)
      .join('');
    expect(typeof JSON.parse(args).q).toBe('string');
    expect(events.find((e) => e.type === 'response.output_item.added').item).toMatchObject({
      type: 'function_call',
      arguments: '',
    });
    const r = await json(
      h.post('/v1/responses', {
        model: 'm',
        input: 'x',
        text: {
          format: {
            type: 'json_schema',
            name: 'o',
            schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
          },
        },
      }),
    );
    expect(Number.isInteger(JSON.parse(r.output[0].content[0].text).n)).toBe(true);
  });

  it('a cut at max_output_tokens is status incomplete; bad bodies are OpenAI-shaped 400s', async () => {
    const h = await start({ models: [fast()] });
    const schema = {
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'string' }, c: { type: 'string' } },
    };
    const r = await json(
      h.post('/v1/responses', {
        model: 'm',
        input: 'x',
        max_output_tokens: 16,
        text: {
          format: {
            type: 'json_schema',
            name: 'o',
            schema: {
              ...schema,
              properties: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, { type: 'string' }])),
            },
          },
        },
      }),
    );
    expect(r).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    const missing = await h.post('/v1/responses', { model: 'm' });
    expect(missing.status).toBe(400);
    expect((await json(missing)).error).toMatchObject({ param: 'input', code: 'missing_required_parameter' });
    const small = await h.post('/v1/responses', { model: 'm', input: 'x', max_output_tokens: 3 });
    expect((await json(small)).error.code).toBe('integer_below_min_value');
  });

  it('embeddings: unit vectors, the same text the same vector, base64 as float32 little-endian', async () => {
    const h = await start({ models: [fast()] });
    const floats = await json(
      h.post('/v1/embeddings', { model: 'text-embedding-3-small', input: ['a', 'b', 'a'], dimensions: 8 }),
    );
    const [a, b, a2] = floats.data.map((d: any) => d.embedding as number[]);
    expect(a).toHaveLength(8);
    expect(a).toEqual(a2);
    expect(a).not.toEqual(b);
    expect(Math.hypot(...a)).toBeCloseTo(1, 5);
    const b64 = await json(
      h.post('/v1/embeddings', { model: 'e', input: 'a', dimensions: 8, encoding_format: 'base64' }),
    );
    const buf = Buffer.from(b64.data[0].embedding, 'base64');
    expect(Array.from(new Float32Array(buf.buffer, buf.byteOffset, 8))).toEqual(a);
    expect(b64.usage.prompt_tokens).toBeGreaterThan(0);
    expect((await h.post('/v1/embeddings', { model: 'e', input: [] })).status).toBe(400);
  });
});
