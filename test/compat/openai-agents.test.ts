import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isWeatherArgs, TOOL_RESULT, useCompatUpstream, WIRINGS, type Wiring } from './compat-upstream.js';

const up = useCompatUpstream();
const Weather = z.object({ city: z.string().min(2), unit: z.enum(['c', 'f']), days: z.number().int().min(1).max(7) });
const Answer = z.object({ city: z.string(), score: z.number().int().min(0).max(10), tags: z.array(z.string()) });

beforeAll(() => setTracingDisabled(true));

describe.each(WIRINGS)('OpenAI Agents SDK Runner (%s)', (wiring) => {
  const runner = (w: Wiring, useResponses = true) =>
    new Runner({
      tracingDisabled: true,
      modelProvider: new OpenAIProvider({
        openAIClient: new OpenAI({ baseURL: `${up.fu().url}/v1`, apiKey: 'test', fetch: up.fetchFor(w) }),
        useResponses,
      }),
    });
  const weatherAgent = (seen: unknown[]) =>
    new Agent({
      name: 'weather',
      instructions: 'Answer with the weather tool.',
      model: 'gpt-4o-mini',
      tools: [
        tool({
          name: 'get_weather',
          description: 'Weather for a city',
          parameters: Weather,
          execute: async (input) => {
            seen.push(input);
            return TOOL_RESULT;
          },
        }),
      ],
    });

  it('runs an agent with a tool over the Responses API (its default): two model calls', async () => {
    const mark = up.mark();
    const seen: unknown[] = [];
    const r = await runner(wiring).run(weatherAgent(seen), 'Weather in Paris?');
    expect(seen).toHaveLength(1);
    expect(isWeatherArgs(seen[0])).toBe(true);
    expect(String(r.finalOutput)).toContain(TOOL_RESULT);
    expect(up.since(mark).map((e) => [e.route, e.status])).toEqual([
      ['/v1/responses', 200],
      ['/v1/responses', 200],
    ]);
  });

  it('streams the same run', async () => {
    const seen: unknown[] = [];
    const r = await runner(wiring).run(weatherAgent(seen), 'Weather in Paris?', { stream: true });
    for await (const _ of r.toTextStream()) {
      // drain
    }
    await r.completed;
    expect(isWeatherArgs(seen[0])).toBe(true);
    expect(String(r.finalOutput)).toContain(TOOL_RESULT);
  });

  it('run(…, { previousResponseId }): the server keeps the conversation, the run ends with the tool answer', async () => {
    const mark = up.mark();
    const seen: unknown[] = [];
    const first = await runner(wiring).run(weatherAgent(seen), 'Hello');
    expect(first.lastResponseId).toMatch(/^resp_/);
    const r = await runner(wiring).run(weatherAgent(seen), 'Weather in Paris?', {
      previousResponseId: first.lastResponseId,
    });
    expect(isWeatherArgs(seen[seen.length - 1])).toBe(true);
    expect(String(r.finalOutput)).toContain(TOOL_RESULT);
    expect(up.since(mark).every((e) => e.route === '/v1/responses' && e.status === 200)).toBe(true);
    // Each turn continued the one before by id, back to the first run's last response.
    const client = new OpenAI({ baseURL: `${up.fu().url}/v1`, apiKey: 'test', fetch: up.fetchFor(wiring) });
    const chain: string[] = [];
    for (let id = r.lastResponseId; id !== undefined && id !== first.lastResponseId && chain.length < 5; ) {
      chain.push(id);
      id = (await client.responses.retrieve(id)).previous_response_id ?? undefined;
    }
    expect(chain).toHaveLength(2);
  });

  it('structured output: outputType', async () => {
    const agent = new Agent({ name: 'rater', instructions: 'Rate.', model: 'gpt-4o-mini', outputType: Answer });
    const r = await runner(wiring).run(agent, 'Rate Paris');
    expect(Answer.safeParse(r.finalOutput).success).toBe(true);
  });

  it('over chat completions (useResponses: false) too', async () => {
    const seen: unknown[] = [];
    const r = await runner(wiring, false).run(weatherAgent(seen), 'Weather in Paris?');
    expect(isWeatherArgs(seen[0])).toBe(true);
    expect(String(r.finalOutput)).toContain(TOOL_RESULT);
  });

  up.checkWiring(wiring);
});
