import { describe, expect, it } from 'vitest';
import { idsIn, maskIds } from '../helpers/mask-ids.js';
import { fast, start, type Harness } from './harness.js';

const weather = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const openaiTools = [{ type: 'function', function: { name: 'get_weather', parameters: weather } }];
const anthropicTools = [{ name: 'get_weather', input_schema: weather }];
const responsesTools = [{ type: 'function', name: 'get_weather', parameters: weather }];

/** One request of every kind that gives out ids, answered whole (JSON or SSE text), in order. */
async function session(h: Harness): Promise<string[]> {
  const texts: string[] = [];
  const send = async (r: Promise<Response>) => texts.push(await (await r).text());
  for (const stream of [false, true]) {
    await send(h.chat({ stream }));
    await send(h.chat({ stream, tools: openaiTools, parallel_tool_calls: true }));
    await send(h.messages({ stream }));
    await send(h.messages({ stream, tools: anthropicTools, max_tokens: 256 }));
    await send(h.post('/v1/responses', { model: 'm', input: 'hi', stream }));
    await send(h.post('/v1/responses', { model: 'm', input: 'weather?', stream, tools: responsesTools }));
  }
  return texts;
}

/** What is not an id and not the wall clock (`created`, `created_at`): what the seed decides. */
const seeded = (text: string) => maskIds(text).replace(/"created(_at)?":\d+/g, '"created$1":0');

describe('fake upstream: ids', () => {
  it('every answer, message, tool call and item id is unique across requests and two servers with the same seed; the rest is the same', async () => {
    const opts = { seed: 7, toolPolicy: { parallel: 2 } };
    const a = await start({ models: [fast()] }, opts);
    const b = await start({ models: [fast()] }, opts);
    const [ta, tb] = [await session(a), await session(b)];
    const ids = [...ta, ...tb].flatMap((t) => [...new Set(idsIn(t))]);
    // Every kind is there: 2 servers × 2 (JSON, stream) of each answer, 2 parallel calls a tool turn.
    const kinds = ids.map((id) => /^[a-z]+(-|_01|_)/.exec(id)?.[0]);
    for (const [prefix, n] of [
      ['chatcmpl-', 8],
      ['call_', 8 + 8],
      ['msg_01', 8],
      ['toolu_01', 8],
      ['resp_', 8],
      ['msg_', 4],
      ['fc_', 8],
    ] as const)
      expect(
        kinds.filter((k) => k === prefix),
        prefix,
      ).toHaveLength(n);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id) => /^[a-z]+(-|_01|_)[A-Za-z0-9]{22,48}$/.test(id))).toBe(true);
    // The same seed and requests: the same answers but for the ids (and the clock).
    expect(ta.map(seeded)).toEqual(tb.map(seeded));
    expect(ta.map(seeded)).not.toEqual(ta);
  });
});
