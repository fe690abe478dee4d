import { describe, expect, it } from 'vitest';
import { fast, json, sseEvents, start, type Harness } from './harness.js';

const tools = [
  {
    type: 'function',
    name: 'lookup',
    parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  },
];

const respond = (h: Harness, body: Record<string, unknown>) => h.post('/v1/responses', { model: 'm', ...body });
const get = (h: Harness, id: string, method = 'GET') => fetch(`${h.url}/v1/responses/${id}`, { method });

describe('fake upstream: Responses state (store, previous_response_id, GET and DELETE)', () => {
  it('a tools loop by previous_response_id: the call, then the answer to its function_call_output', async () => {
    const h = await start({ models: [fast()] });
    const first = await json(respond(h, { input: 'find it', tools }));
    expect(first).toMatchObject({ store: true, previous_response_id: null });
    const call = first.output[0];
    expect(call.type).toBe('function_call');
    const second = await json(
      respond(h, {
        tools,
        previous_response_id: first.id,
        input: [{ type: 'function_call_output', call_id: call.call_id, output: 'found it' }],
      }),
    );
    expect(second).toMatchObject({ status: 'completed', store: true, previous_response_id: first.id });
    expect(second.output[0].type).toBe('message');
    expect(second.output[0].content[0].text).toContain('found it');
    // The stored conversation counts toward the prompt: more than the new input alone.
    const alone = await json(
      respond(h, { tools, input: [{ type: 'function_call_output', call_id: call.call_id, output: 'found it' }] }),
    );
    expect(second.usage.input_tokens).toBeGreaterThan(alone.usage.input_tokens);
    // A new user turn on the same conversation starts a tool turn again.
    const third = await json(respond(h, { tools, previous_response_id: second.id, input: 'and another?' }));
    expect(third.output[0].type).toBe('function_call');
  });

  it('an id never given out, or not stored, is the API 400 on previous_response_id; wrong types are 400s naming the field', async () => {
    const h = await start({ models: [fast()] });
    const res = await respond(h, { input: 'hi', previous_response_id: 'resp_nope' });
    expect(res.status).toBe(400);
    expect(await json(res)).toEqual({
      error: {
        message: "Previous response with id 'resp_nope' not found.",
        type: 'invalid_request_error',
        param: 'previous_response_id',
        code: 'previous_response_not_found',
      },
    });
    const unstored = await json(respond(h, { input: 'hi', store: false }));
    expect(unstored.store).toBe(false);
    const again = await respond(h, { input: 'hi', previous_response_id: unstored.id });
    expect(again.status).toBe(400);
    expect((await json(again)).error.param).toBe('previous_response_id');
    expect((await get(h, unstored.id)).status).toBe(404);
    for (const [field, value] of [
      ['previous_response_id', 5],
      ['store', 'yes'],
    ] as const) {
      const bad = await respond(h, { input: 'hi', [field]: value });
      expect(bad.status).toBe(400);
      expect((await json(bad)).error).toMatchObject({ param: field, code: 'invalid_type' });
    }
    expect(h.fu.requests().map((r) => r.status)).toEqual([400, 200, 400, 404, 400, 400]);
  });

  it('GET answers the stored response as it was sent (JSON or a stream last event); DELETE forgets it', async () => {
    const h = await start({ models: [fast()] });
    const sent = await json(respond(h, { input: 'hi', tools }));
    expect(await json(get(h, sent.id))).toEqual(sent);
    const stream = sseEvents(await (await respond(h, { input: 'hi', stream: true })).text());
    const completed = JSON.parse(stream[stream.length - 1].data).response;
    expect(completed.store).toBe(true);
    expect(await json(get(h, completed.id))).toEqual(completed);
    const del = await get(h, sent.id, 'DELETE');
    expect(await json(del)).toEqual({ id: sent.id, object: 'response', deleted: true });
    const gone = await get(h, sent.id);
    expect(gone.status).toBe(404);
    expect((await json(gone)).error).toMatchObject({
      message: `Response with id '${sent.id}' not found.`,
      type: 'invalid_request_error',
    });
    expect((await get(h, sent.id, 'DELETE')).status).toBe(404);
    expect((await respond(h, { input: 'x', previous_response_id: sent.id })).status).toBe(400);
    expect((await get(h, sent.id, 'PUT')).status).toBe(405);
    // The request log names the route, not each id.
    expect(new Set(h.fu.requests().map((r) => r.route))).toEqual(new Set(['/v1/responses', '/v1/responses/{id}']));
  });

  it('keeps the storedResponses most recently used: past it the oldest is forgotten (a 400 on continuing it)', async () => {
    const h = await start({ models: [fast()] }, { storedResponses: 2 });
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) ids.push((await json(respond(h, { input: `q${i}` }))).id);
    // Using the first makes the second the oldest.
    expect((await get(h, ids[0])).status).toBe(200);
    ids.push((await json(respond(h, { input: 'q2' }))).id);
    expect([200, 404, 200]).toEqual(await Promise.all(ids.map(async (id) => (await get(h, id)).status)));
    const evicted = await respond(h, { input: 'more', previous_response_id: ids[1] });
    expect(evicted.status).toBe(400);
    expect((await json(evicted)).error.code).toBe('previous_response_not_found');
    // Reset forgets every stored response.
    await fetch(`${h.url}/_stormlab/reset`, { method: 'POST' });
    expect((await get(h, ids[2])).status).toBe(404);
  });

  it('a conversation carried by id is at most the body limit long (the API context_length_exceeded past it)', async () => {
    const h = await start({ models: [fast()] }, { maxBodyBytes: 4000 });
    const turn = 'x'.repeat(900);
    let previous: string | undefined;
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await respond(h, { input: turn, previous_response_id: previous, max_output_tokens: 16 });
      statuses.push(res.status);
      const body = await json(res);
      if (res.status !== 200) {
        expect(body.error).toMatchObject({ param: 'input', code: 'context_length_exceeded' });
        break;
      }
      previous = body.id;
    }
    expect(statuses.slice(0, 2)).toEqual([200, 200]);
    expect(statuses[statuses.length - 1]).toBe(400);
  });

  it('GET input_items lists what a stored answer answered, as the API pages it (limit, order, after)', async () => {
    const h = await start({ models: [fast()] });
    const first = await json(respond(h, { input: 'find it', tools }));
    const call = first.output[0];
    const second = await json(
      respond(h, {
        tools,
        previous_response_id: first.id,
        input: [{ type: 'function_call_output', call_id: call.call_id, output: 'found it' }],
      }),
    );
    const list = (id: string, query = '') => fetch(`${h.url}/v1/responses/${id}/input_items${query}`);
    // The first answered only its question, given back in the API's full message form.
    const own = await json(list(first.id));
    expect(own).toMatchObject({ object: 'list', has_more: false });
    expect(own.data).toEqual([
      {
        id: expect.stringMatching(/^msg_[0-9a-f]{48}$/),
        type: 'message',
        role: 'user',
        content: [{ type: 'input_text', text: 'find it' }],
        status: 'completed',
      },
    ]);
    expect(own.first_id).toBe(own.data[0].id);
    // The second: the conversation it continued, then its own input; newest first by default.
    const all = await json(list(second.id, '?order=asc'));
    expect(all.data.map((i: { type: string }) => i.type)).toEqual(['message', 'function_call', 'function_call_output']);
    expect(all.data[0].id).toBe(own.data[0].id); // the same ids on every read
    expect(all.data[1]).toEqual(call);
    expect(all.data[2]).toMatchObject({
      id: expect.stringMatching(/^item_/),
      call_id: call.call_id,
      output: 'found it',
    });
    const desc = await json(list(second.id));
    expect(desc.data.map((i: { id: string }) => i.id)).toEqual(
      [...all.data].reverse().map((i: { id: string }) => i.id),
    );
    // Pages: limit and after walk the list, has_more says when to stop.
    const p1 = await json(list(second.id, '?order=asc&limit=2'));
    expect(p1).toMatchObject({ has_more: true, first_id: all.data[0].id, last_id: all.data[1].id });
    const p2 = await json(list(second.id, `?order=asc&limit=2&after=${p1.last_id}`));
    expect(p2).toMatchObject({ has_more: false, data: [all.data[2]] });
    // The continuation still answers with ids on its stored items.
    const third = await respond(h, { tools, previous_response_id: second.id, input: 'and another?' });
    expect(third.status).toBe(200);
    // Bad queries are the API's 400 naming the parameter; an id not stored is a 404.
    for (const [query, param] of [
      ['?limit=0', 'limit'],
      ['?limit=101', 'limit'],
      ['?limit=two', 'limit'],
      ['?order=up', 'order'],
      ['?after=item_nope', 'after'],
      ['?include=everything', 'include'],
    ] as const) {
      const res = await list(second.id, query);
      expect(res.status, query).toBe(400);
      expect((await json(res)).error).toMatchObject({ type: 'invalid_request_error', param });
    }
    expect((await list(second.id, '?include=message.input_image.image_url')).status).toBe(200);
    const missing = await list('resp_nope');
    expect(missing.status).toBe(404);
    expect((await json(missing)).error.message).toBe("Response with id 'resp_nope' not found.");
    expect(new Set(h.fu.requests().map((r) => r.route))).toEqual(
      new Set(['/v1/responses', '/v1/responses/{id}/input_items']),
    );
  });
});
