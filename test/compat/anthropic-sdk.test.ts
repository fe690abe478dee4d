import Anthropic from '@anthropic-ai/sdk';
import { zodOutputFormat } from '@anthropic-ai/sdk/helpers/zod';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isWeatherArgs, TOOL_RESULT, useCompatUpstream, WEATHER_SCHEMA, WIRINGS } from './compat-upstream.js';

const up = useCompatUpstream();
const MODEL = 'claude-3-5-haiku-latest';
/**
 * Structured outputs with constraints the API refuses in a schema: `zodOutputFormat` moves them
 * into each field's description (`{pattern: "…"}`) and parses the answer with the whole schema.
 */
const CONSTRAINED = {
  pattern: z.object({ code: z.string().regex(/^[A-Z]{3}-\d{2}$/), upper: z.string().uppercase().min(2) }),
  'numeric bounds': z.object({
    score: z.number().min(10).max(20),
    open: z.number().gt(3).lt(3.5),
    count: z.number().int().gt(3).lt(6),
    any: z.number().int(),
    step: z.number().multipleOf(5).min(7),
  }),
  'length bounds': z.object({ name: z.string().min(12).max(14), short: z.string().max(3) }),
  formats: z.object({
    id: z.cuid(),
    ulid: z.ulid(),
    v6: z.ipv6(),
    span: z.iso.duration(),
    mail: z.email(),
    prefix: z.string().startsWith('AB'),
  }),
  'array bounds': z.object({ tags: z.array(z.string().length(4)).min(3).max(4) }),
};

const weather: Anthropic.Tool = {
  name: 'get_weather',
  description: 'Weather for a city',
  input_schema: WEATHER_SCHEMA as unknown as Anthropic.Tool.InputSchema,
};

describe.each(WIRINGS)('@anthropic-ai/sdk (%s)', (wiring) => {
  const client = () => new Anthropic({ baseURL: up.fu().url, apiKey: 'test', fetch: up.fetchFor(wiring) });

  it('chat: a message for a real model name', async () => {
    const m = await client().messages.create({
      model: MODEL,
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(m.model).toBe(MODEL);
    expect(m.stop_reason).toBe('end_turn');
    expect(m.content[0].type).toBe('text');
  });

  it('stream: messages.stream() gives the final message', async () => {
    const stream = client().messages.stream({
      model: MODEL,
      max_tokens: 24,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const m = await stream.finalMessage();
    expect(m.content[0].type === 'text' && m.content[0].text.split(' ')).toHaveLength(24);
  });

  it('tools: a two-step loop (tool_use, tool_result, final text), streamed tool input included', async () => {
    const c = client();
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const inputs: unknown[] = [];
    for (let step = 0; step < 5; step++) {
      // The tool turn is streamed (input_json_delta), the final answer is not.
      const m =
        step === 0
          ? await c.messages.stream({ model: MODEL, max_tokens: 256, messages, tools: [weather] }).finalMessage()
          : await c.messages.create({ model: MODEL, max_tokens: 256, messages, tools: [weather] });
      messages.push({ role: 'assistant', content: m.content });
      if (m.stop_reason !== 'tool_use') break;
      const results: Anthropic.ToolResultBlockParam[] = [];
      for (const b of m.content) {
        if (b.type !== 'tool_use') continue;
        inputs.push(b.input);
        results.push({ type: 'tool_result', tool_use_id: b.id, content: TOOL_RESULT });
      }
      messages.push({ role: 'user', content: results });
    }
    expect(inputs).toHaveLength(1);
    expect(isWeatherArgs(inputs[0])).toBe(true);
    const last = messages[messages.length - 1];
    expect(last.role).toBe('assistant');
    expect(JSON.stringify(last.content)).toContain(TOOL_RESULT);
  });

  it('structured output: a forced tool returns input valid against its schema', async () => {
    const m = await client().messages.create({
      model: MODEL,
      max_tokens: 256,
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [weather],
      tool_choice: { type: 'tool', name: 'get_weather' },
    });
    const use = m.content.find((b) => b.type === 'tool_use');
    expect(use?.type === 'tool_use' && use.name).toBe('get_weather');
    expect(use?.type === 'tool_use' && isWeatherArgs(use.input)).toBe(true);
  });

  it('a cut at max_tokens says stop_reason max_tokens', async () => {
    const m = await client().messages.create({
      model: MODEL,
      max_tokens: 2,
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [weather],
      tool_choice: { type: 'any' },
    });
    expect(m.stop_reason).toBe('max_tokens');
  });

  it.each(Object.entries(CONSTRAINED))(
    'messages.parse with zodOutputFormat honours the constraints moved into descriptions: %s',
    async (kind, schema) => {
      const format = zodOutputFormat(schema);
      // The constraint is in a description only, so this checks the hint and not the schema.
      expect(JSON.stringify(format.schema), kind).toMatch(/"description":"\{\w+: /);
      const m = await client().messages.parse({
        model: MODEL,
        max_tokens: 1024,
        messages: [{ role: 'user', content: 'Fill it in' }],
        output_config: { format },
      });
      expect(schema.safeParse(m.parsed_output).success).toBe(true);
    },
  );

  up.checkWiring(wiring);
});
