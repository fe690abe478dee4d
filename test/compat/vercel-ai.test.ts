import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, type LanguageModel, Output, stepCountIs, streamText, tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isWeatherArgs, TOOL_RESULT, useCompatUpstream, WIRINGS, type Wiring } from './compat-upstream.js';

const up = useCompatUpstream();
const Weather = z.object({ city: z.string().min(2), unit: z.enum(['c', 'f']), days: z.number().int().min(1).max(7) });
const Answer = z.object({ city: z.string(), score: z.number().int().min(0).max(10), tags: z.array(z.string()) });

/** `openai()` is the Responses API by default; `openai.chat()` chat completions; `anthropic()` messages. */
const MODELS: Record<string, (w: Wiring) => LanguageModel> = {
  'openai() (Responses API)': (w) =>
    createOpenAI({ baseURL: `${up.fu().url}/v1`, apiKey: 'test', fetch: up.fetchFor(w) })('gpt-4o-mini'),
  'openai.chat()': (w) =>
    createOpenAI({ baseURL: `${up.fu().url}/v1`, apiKey: 'test', fetch: up.fetchFor(w) }).chat('gpt-4o-mini'),
  'anthropic()': (w) =>
    createAnthropic({ baseURL: `${up.fu().url}/v1`, apiKey: 'test', fetch: up.fetchFor(w) })('claude-3-5-haiku-latest'),
};

const cases = WIRINGS.flatMap((w) => Object.keys(MODELS).map((name) => [name, w] as const));

describe.each(cases)('Vercel AI SDK, %s (%s)', (name, wiring) => {
  const model = () => MODELS[name](wiring);

  it('chat: generateText', async () => {
    const r = await generateText({ model: model(), prompt: 'hi', maxOutputTokens: 4096 });
    expect(r.text.length).toBeGreaterThan(0);
    expect(r.finishReason).toBe('stop');
  });

  it('stream: streamText', async () => {
    const r = streamText({ model: model(), prompt: 'hi', maxOutputTokens: 32 });
    let text = '';
    for await (const t of r.textStream) text += t;
    expect(text.split(' ')).toHaveLength(32);
  });

  it('tools: generateText runs a two-step loop (tool call with valid input, then the answer)', async () => {
    const seen: unknown[] = [];
    const r = await generateText({
      model: model(),
      prompt: 'Weather in Paris?',
      tools: {
        get_weather: tool({
          description: 'Weather for a city',
          inputSchema: Weather,
          execute: async (input) => {
            seen.push(input);
            return TOOL_RESULT;
          },
        }),
      },
      stopWhen: stepCountIs(5),
    });
    expect(r.steps).toHaveLength(2);
    expect(seen).toHaveLength(1);
    expect(isWeatherArgs(seen[0])).toBe(true);
    expect(r.text).toContain(TOOL_RESULT);
  });

  it('tools, streamed: streamText runs the same loop', async () => {
    const seen: unknown[] = [];
    const r = streamText({
      model: model(),
      prompt: 'Weather in Paris?',
      tools: {
        get_weather: tool({
          inputSchema: Weather,
          execute: async (input) => {
            seen.push(input);
            return TOOL_RESULT;
          },
        }),
      },
      stopWhen: stepCountIs(5),
    });
    expect(await r.text).toContain(TOOL_RESULT);
    expect((await r.steps).length).toBe(2);
    expect(isWeatherArgs(seen[0])).toBe(true);
  });

  it('structured output: Output.object', async () => {
    const r = await generateText({ model: model(), prompt: 'Rate Paris', output: Output.object({ schema: Answer }) });
    expect(Answer.safeParse(r.output).success).toBe(true);
  });

  up.checkWiring(wiring);
});
