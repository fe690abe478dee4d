import { connect } from 'node:net';
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { fast, json, start, type Harness, USER } from './harness.js';

/** The server still serves a good request. */
async function stillServes(h: Harness): Promise<void> {
  const res = await h.chat({ max_tokens: 2 });
  expect(res.status).toBe(200);
  expect((await json(res)).usage.completion_tokens).toBe(2);
}

describe('fake upstream: bad input', () => {
  it('answers malformed JSON with a provider-shaped 400 and keeps serving', async () => {
    const h = await start({ models: [fast()] });
    const openai = await h.post('/v1/chat/completions', '{"model": "m", "messages": [');
    expect(openai.status).toBe(400);
    expect((await json(openai)).error).toMatchObject({
      type: 'invalid_request_error',
      param: null,
      message: expect.stringMatching(/could not parse the JSON body/),
    });
    const anthropic = await h.post('/v1/messages', '{nope');
    expect(anthropic.status).toBe(400);
    expect(await json(anthropic)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(h.fu.stats().http.invalid).toBe(2);
    await stillServes(h);
  });

  it.each([
    ['a JSON array body', [], null, /expected a JSON object, but got an array/],
    ['no model', { messages: USER }, 'model', /you must provide a model parameter/],
    [
      'a model that is not a string',
      { model: 7, messages: USER },
      'model',
      /Invalid type for 'model': expected a string, but got an integer instead/,
    ],
    ['no messages', { model: 'm' }, 'messages', /Missing required parameter: 'messages'/],
    [
      'messages not an array',
      { model: 'm', messages: 'hi' },
      'messages',
      /Invalid type for 'messages': expected an array of objects, but got a string/,
    ],
    ['empty messages', { model: 'm', messages: [] }, 'messages', /empty array/],
    [
      'a message that is not an object',
      { model: 'm', messages: [1] },
      'messages[0]',
      /Invalid type for 'messages\[0\]'/,
    ],
    [
      'max_tokens of 0',
      { model: 'm', messages: USER, max_tokens: 0 },
      'max_tokens',
      /Expected a value >= 1, but got 0/,
    ],
    [
      'max_tokens not an integer',
      { model: 'm', messages: USER, max_tokens: 1.5 },
      'max_tokens',
      /expected an integer, but got a decimal/,
    ],
    [
      'max_tokens as a string',
      { model: 'm', messages: USER, max_tokens: '10' },
      'max_tokens',
      /expected an integer, but got a string/,
    ],
    [
      'max_completion_tokens negative',
      { model: 'm', messages: USER, max_completion_tokens: -3 },
      'max_completion_tokens',
      /got -3/,
    ],
    ['stream not a boolean', { model: 'm', messages: USER, stream: 'yes' }, 'stream', /expected a boolean/],
    [
      'stream_options not an object',
      { model: 'm', messages: USER, stream: true, stream_options: 5 },
      'stream_options',
      /expected an object/,
    ],
    [
      'include_usage not a boolean',
      { model: 'm', messages: USER, stream: true, stream_options: { include_usage: 1 } },
      'stream_options.include_usage',
      /expected a boolean/,
    ],
  ])('OpenAI: %s → 400 naming the field', async (_what, body, param, message) => {
    const h = await start({ models: [fast()] });
    const res = await h.post('/v1/chat/completions', body);
    expect(res.status).toBe(400);
    const { error } = await json(res);
    expect(error.type).toBe('invalid_request_error');
    expect(error.param).toBe(param);
    expect(error.message).toMatch(message);
    expect(h.fu.stats().models[0].attempts).toBe(0);
    await stillServes(h);
  });

  it.each([
    ['no max_tokens', { model: 'm', messages: USER }, 'max_tokens: Field required'],
    [
      'max_tokens of 0',
      { model: 'm', messages: USER, max_tokens: 0 },
      'max_tokens: Input should be greater than or equal to 1',
    ],
    [
      'max_tokens as a string',
      { model: 'm', messages: USER, max_tokens: 'many' },
      'max_tokens: Input should be a valid integer',
    ],
    ['no model', { messages: USER, max_tokens: 5 }, 'model: Field required'],
    ['messages not a list', { model: 'm', messages: {}, max_tokens: 5 }, 'messages: Input should be a valid list'],
    [
      'a message that is not an object',
      { model: 'm', messages: ['hi'], max_tokens: 5 },
      'messages.0: Input should be a valid dictionary',
    ],
    [
      'a system that is a number',
      { model: 'm', messages: USER, max_tokens: 5, system: 3 },
      'system: Input should be a valid string or a list of text blocks',
    ],
    [
      'stream not a boolean',
      { model: 'm', messages: USER, max_tokens: 5, stream: 1 },
      'stream: Input should be a valid boolean',
    ],
  ])('Anthropic: %s → 400 naming the field', async (_what, body, message) => {
    const h = await start({ models: [fast()] });
    const res = await h.post('/v1/messages', body);
    expect(res.status).toBe(400);
    expect(await json(res)).toEqual({ type: 'error', error: { type: 'invalid_request_error', message } });
    await stillServes(h);
  });

  it('answers a body over maxBodyBytes with 413, declared or not, and keeps serving', async () => {
    const h = await start({ models: [fast()] }, { maxBodyBytes: 1000 });
    const declared = await h.post(
      '/v1/chat/completions',
      JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(5000) }] }),
    );
    expect(declared.status).toBe(413);
    expect(declared.headers.get('connection')).toBe('close');
    expect((await json(declared)).error).toMatchObject({
      code: 'request_too_large',
      message: 'Request body too large: the limit is 1000 bytes.',
    });
    const chunk = new Uint8Array(1000).fill(32);
    let sent = 0;
    const body = new ReadableStream({
      pull(c) {
        if (sent >= 2_000_000) return c.close();
        sent += chunk.length;
        c.enqueue(chunk);
      },
    });
    const chunked = await fetch(`${h.url}/v1/messages`, { method: 'POST', body, duplex: 'half' } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(await json(chunked)).toMatchObject({ type: 'error', error: { type: 'request_too_large' } });
    const faults = await fetch(`${h.url}/_stormlab/faults`, { method: 'PUT', body: `[${' '.repeat(2000)}]` });
    expect(faults.status).toBe(413);
    await stillServes(h);
  });

  it('answers an unknown route with 404 JSON and a wrong method with 405 and Allow', async () => {
    const h = await start({ models: [fast()] });
    const missing = await fetch(`${h.url}/v1/completions?x=1`);
    expect(missing.status).toBe(404);
    expect((await json(missing)).error).toMatchObject({
      code: 'unknown_url',
      message: 'Unknown request URL: GET /v1/completions.',
    });
    const wrong = await fetch(`${h.url}/v1/chat/completions`);
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
    expect((await json(wrong)).error.message).toBe('Method GET not allowed on /v1/chat/completions (allowed: POST).');
    const faults = await fetch(`${h.url}/_stormlab/faults`, { method: 'DELETE' });
    expect(faults.status).toBe(405);
    expect(faults.headers.get('allow')).toBe('GET, PUT');
    const anthropic = await fetch(`${h.url}/v1/messages/batches`, { headers: { 'anthropic-version': '2023-06-01' } });
    expect(anthropic.status).toBe(404);
    expect((await json(anthropic)).error.type).toBe('not_found_error');
    expect(h.fu.stats().http).toMatchObject({ received: 4, invalid: 4 });
    await stillServes(h);
  });

  it('answers bytes that are not HTTP with 400 and keeps serving', async () => {
    const h = await start({ models: [fast()] });
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(h.fu.port, '127.0.0.1', () => socket.write('HELLO THERE\r\n\r\n'));
      let text = '';
      socket.on('data', (d) => (text += d.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(reply).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    await stillServes(h);
  });

  it('survives a client that leaves in the middle of its body', async () => {
    const h = await start({ models: [fast()] });
    await new Promise<void>((resolve) => {
      const req = request(`${h.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-length': '1000' } });
      req.on('error', () => resolve());
      req.write('{"model": "m", "mess', () => req.destroy());
      req.on('close', () => resolve());
    });
    await stillServes(h);
    expect(h.fu.stats().models[0].attempts).toBe(1);
  });

  it('answers 500 when something inside a handler throws, tells the observer, and keeps serving', async () => {
    let fail = true;
    const h = await start(
      { models: [fast()] },
      {
        observer: {
          submitted: () => {
            if (fail) {
              fail = false;
              throw new Error('observer bug');
            }
          },
        },
      },
    );
    const res = await h.chat({});
    expect(res.status).toBe(500);
    expect((await json(res)).error).toMatchObject({
      type: 'server_error',
      message: 'internal error in the fake upstream: observer bug',
    });
    expect(h.fu.stats().http).toMatchObject({ internalErrors: 1, clientClosed: 0 });
    // Nobody waits for that request any more: the model was told.
    expect(h.fu.stats().models[0].cancelled).toBe(1);
    await stillServes(h);
  });
});
