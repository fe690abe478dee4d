import { type AIMessage, HumanMessage, type BaseMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isWeatherArgs, TOOL_RESULT, useCompatUpstream, WIRINGS } from './compat-upstream.js';

const up = useCompatUpstream();
const Weather = z.object({ city: z.string().min(2), unit: z.enum(['c', 'f']), days: z.number().int().min(1).max(7) });
const Answer = z.object({ city: z.string(), score: z.number().int().min(0).max(10), tags: z.array(z.string()) });

describe.each(WIRINGS)('LangChain ChatOpenAI (%s)', (wiring) => {
  const chat = (extra: Record<string, unknown> = {}) =>
    new ChatOpenAI({
      model: 'gpt-4o-mini',
      apiKey: 'test',
      configuration: { baseURL: `${up.fu().url}/v1`, fetch: up.fetchFor(wiring) },
      ...extra,
    });

  it('chat: invoke', async () => {
    const m = await chat().invoke('hi');
    expect(String(m.content).length).toBeGreaterThan(0);
  });

  it('stream: chunks add up', async () => {
    let text = '';
    for await (const c of await chat({ maxTokens: 20 }).stream('hi')) text += String(c.content);
    expect(text.split(' ')).toHaveLength(20);
  });

  it('tools: bindTools, a two-step loop with a real tool', async () => {
    const seen: unknown[] = [];
    const getWeather = tool(
      async (input) => {
        seen.push(input);
        return TOOL_RESULT;
      },
      { name: 'get_weather', description: 'Weather for a city', schema: Weather },
    );
    const model = chat().bindTools([getWeather]);
    const messages: BaseMessage[] = [new HumanMessage('Weather in Paris?')];
    for (let step = 0; step < 5; step++) {
      const m = (await model.invoke(messages)) as AIMessage;
      messages.push(m);
      if (!m.tool_calls?.length) break;
      for (const call of m.tool_calls) {
        const out = await getWeather.invoke(call.args as z.infer<typeof Weather>);
        messages.push(new ToolMessage({ tool_call_id: call.id ?? '', content: String(out) }));
      }
    }
    expect(seen).toHaveLength(1);
    expect(isWeatherArgs(seen[0])).toBe(true);
    expect(String(messages[messages.length - 1].content)).toContain(TOOL_RESULT);
  });

  it('structured output: withStructuredOutput (its default method) and functionCalling', async () => {
    const byDefault = await chat().withStructuredOutput(Answer).invoke('Rate Paris');
    expect(Answer.safeParse(byDefault).success).toBe(true);
    const byTool = await chat().withStructuredOutput(Answer, { method: 'functionCalling' }).invoke('Rate Paris');
    expect(Answer.safeParse(byTool).success).toBe(true);
  });

  it('Responses API: useResponsesApi, with a tool loop', async () => {
    const seen: unknown[] = [];
    const getWeather = tool(
      async (input) => {
        seen.push(input);
        return TOOL_RESULT;
      },
      { name: 'get_weather', description: 'Weather for a city', schema: Weather },
    );
    const model = chat({ useResponsesApi: true }).bindTools([getWeather]);
    const messages: BaseMessage[] = [new HumanMessage('Weather in Paris?')];
    for (let step = 0; step < 5; step++) {
      const m = (await model.invoke(messages)) as AIMessage;
      messages.push(m);
      if (!m.tool_calls?.length) break;
      for (const call of m.tool_calls) {
        const out = await getWeather.invoke(call.args as z.infer<typeof Weather>);
        messages.push(new ToolMessage({ tool_call_id: call.id ?? '', content: String(out) }));
      }
    }
    expect(isWeatherArgs(seen[0])).toBe(true);
    expect(JSON.stringify(messages[messages.length - 1].content)).toContain(TOOL_RESULT);
  });

  up.checkWiring(wiring);
});
