import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  classify,
  classifyStatus,
  ERROR_CLASSES,
  type AttemptResult,
  type ErrorClass,
} from '../../src/engine/classify.js';
import { StreamError } from '../../src/engine/errors.js';

const err = (message: string, props: Record<string, unknown> = {}): Error => Object.assign(new Error(message), props);
const named = (name: string, props: Record<string, unknown> = {}): Error => {
  const e = err(name, props);
  e.name = name;
  return e;
};
const seen = new Set<ErrorClass>();
const cls = (r: AttemptResult, now?: number) => {
  const c = classify(r, now);
  seen.add(c.class);
  return c;
};

describe('classifyStatus', () => {
  it.each([
    [200, 'success', 'done', 'success', true],
    [204, 'success', 'done', 'success', true],
    [400, 'bad_request', 'fail', 'success', true],
    [401, 'auth', 'fail', 'ignored', true],
    [402, 'quota_exhausted', 'fallback', 'ignored', false],
    [403, 'auth', 'fail', 'ignored', true],
    [404, 'not_found', 'fail', 'success', true],
    [408, 'timeout', 'retry', 'failure', false],
    [409, 'conflict', 'retry', 'success', true],
    [413, 'bad_request', 'fail', 'success', true],
    [422, 'bad_request', 'fail', 'success', true],
    [429, 'rate_limited', 'retry', 'throttled', false],
    [500, 'server_error', 'retry', 'failure', false],
    [501, 'server_error', 'fail', 'failure', false],
    [502, 'server_error', 'retry', 'failure', false],
    [503, 'server_error', 'retry', 'failure', false],
    [504, 'server_error', 'retry', 'failure', false],
    [505, 'server_error', 'fail', 'failure', false],
    [529, 'overloaded', 'retry', 'failure', false],
    [302, 'unknown', 'fail', 'failure', false],
  ] as const)('%i → %s / %s, breaker %s, accept %s', (status, c, action, breaker, accept) => {
    const r = classifyStatus(status);
    seen.add(r.class);
    expect(r).toMatchObject({ class: c, action, breaker, accept, counted: true, status });
    expect(r.retryAfterMs).toBeUndefined();
  });

  it('returns the same frozen object every time', () => {
    const a = classifyStatus(503);
    expect(classifyStatus(503)).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
    expect(Object.isFrozen(classifyStatus(200))).toBe(true);
  });

  it('agrees with classify for a bare status and shares its object', () => {
    for (let s = 100; s < 600; s++) expect(classify({ status: s })).toBe(classifyStatus(s));
  });
});

describe('classify: bodies', () => {
  const openai = (code: string | null, type: string, message = 'x') => ({
    error: { message, type, code, param: null },
  });
  const anthropic = (type: string, message = 'x') => ({ type: 'error', error: { type, message } });

  it('tells OpenAI rate limits from exhausted quota', () => {
    expect(cls({ status: 429, body: openai('rate_limit_exceeded', 'requests') })).toMatchObject({
      class: 'rate_limited',
      action: 'retry',
      breaker: 'throttled',
      accept: false,
    });
    expect(cls({ status: 429, body: openai('insufficient_quota', 'insufficient_quota') })).toMatchObject({
      class: 'quota_exhausted',
      action: 'fallback',
      breaker: 'ignored',
      accept: false,
    });
    expect(
      cls({ status: 429, body: openai(null, 'requests', 'You exceeded your current quota, please check your plan') })
        .class,
    ).toBe('quota_exhausted');
  });

  it('parses JSON string bodies, and survives broken ones', () => {
    expect(cls({ status: 429, body: JSON.stringify(openai('insufficient_quota', 'insufficient_quota')) }).class).toBe(
      'quota_exhausted',
    );
    expect(cls({ status: 429, body: '{"error": {"code": "insufficient_quo' }).class).toBe('rate_limited');
    expect(cls({ status: 503, body: 'upstream connect error or disconnect/reset before headers' }).class).toBe(
      'server_error',
    );
  });

  it('recognises context-length errors (→ fallback, the upstream answered)', () => {
    const expected = { class: 'context_length', action: 'fallback', breaker: 'success', accept: true };
    expect(cls({ status: 400, body: openai('context_length_exceeded', 'invalid_request_error') })).toMatchObject(
      expected,
    );
    expect(
      cls({
        status: 400,
        body: openai(null, 'invalid_request_error', "This model's maximum context length is 8192 tokens"),
      }),
    ).toMatchObject(expected);
    expect(
      cls({
        status: 400,
        body: anthropic('invalid_request_error', 'prompt is too long: 200001 tokens > 199999 maximum'),
      }),
    ).toMatchObject(expected);
    expect(
      cls({
        status: 400,
        body: anthropic(
          'invalid_request_error',
          'input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000',
        ),
      }),
    ).toMatchObject(expected);
  });

  it('does not read context-length hints into server errors', () => {
    expect(cls({ status: 500, body: openai(null, 'server_error', 'context tokens exploded') }).class).toBe(
      'server_error',
    );
  });

  it('recognises content filters (→ fail)', () => {
    expect(cls({ status: 400, body: openai('content_filter', 'invalid_request_error') })).toMatchObject({
      class: 'content_filter',
      action: 'fail',
      accept: true,
    });
    expect(cls({ status: 400, body: openai('content_policy_violation', 'invalid_request_error') }).class).toBe(
      'content_filter',
    );
  });

  it('reads Anthropic error types', () => {
    expect(cls({ status: 529, body: anthropic('overloaded_error') })).toMatchObject({
      class: 'overloaded',
      action: 'retry',
      breaker: 'failure',
      accept: false,
    });
    expect(cls({ status: 429, body: anthropic('rate_limit_error') }).class).toBe('rate_limited');
    expect(cls({ status: 401, body: anthropic('authentication_error') }).class).toBe('auth');
    expect(cls({ status: 403, body: anthropic('permission_error') }).class).toBe('auth');
    expect(cls({ status: 404, body: anthropic('not_found_error') }).class).toBe('not_found');
    expect(cls({ status: 500, body: anthropic('api_error') }).class).toBe('server_error');
    expect(cls({ status: 400, body: anthropic('invalid_request_error', 'messages: field required') })).toMatchObject({
      class: 'bad_request',
      action: 'fail',
      breaker: 'success',
      accept: true,
    });
  });

  it('lets the body override the status (overloaded_error on a 503 is overloaded)', () => {
    expect(cls({ status: 503, body: anthropic('overloaded_error') }).class).toBe('overloaded');
  });

  it('lets a generic invalid_request_error defer to the status', () => {
    expect(
      cls({ status: 404, body: openai(null, 'invalid_request_error', 'The model `gpt-9` does not exist') }).class,
    ).toBe('not_found');
  });

  it('treats an error event after a 200 as an error, and an ordinary 200 body as success', () => {
    expect(cls({ status: 200, body: anthropic('overloaded_error') }).class).toBe('overloaded');
    expect(cls({ status: 200, body: { error: { message: '?' } } }).class).toBe('unknown');
    expect(
      cls({ status: 200, body: { type: 'message', content: [{ type: 'text', text: 'context tokens' }] } }).class,
    ).toBe('success');
    expect(cls({ status: 200, body: { message: 'context window of 8k tokens' } }).class).toBe('success');
  });

  it('classifies a status-less error body', () => {
    expect(cls({ body: anthropic('overloaded_error') })).toMatchObject({ class: 'overloaded', status: undefined });
    expect(cls({}).class).toBe('unknown');
  });
});

describe('classify: LLM refusals and stream faults', () => {
  const openai = (code: string, message: string) => ({ error: { message, type: 'invalid_request_error', code } });
  const anthropicMsg = (message: string) => ({ type: 'error', error: { type: 'invalid_request_error', message } });

  it.each([
    [
      'OpenAI context_length_exceeded',
      openai('context_length_exceeded', "This model's maximum context length is 8192 tokens."),
    ],
    ['Anthropic prompt is too long', anthropicMsg('prompt is too long: 208656 tokens > 200000 maximum')],
    [
      'Anthropic max_tokens over the limit',
      anthropicMsg('input length and `max_tokens` exceed context limit: 197626 + 8192 > 200000'),
    ],
  ])('%s → context_length, fallback, with the provider’s reason', (_, body) => {
    const c = cls({ status: 400, body });
    expect(c).toMatchObject({ class: 'context_length', action: 'fallback', breaker: 'success', accept: true });
    expect(c.reason).toBe((body as { error: { message: string } }).error.message);
  });

  it.each([
    [
      'OpenAI content_filter',
      openai('content_filter', 'The response was filtered due to the prompt triggering the content management policy.'),
    ],
    [
      'OpenAI content_policy_violation',
      openai('content_policy_violation', 'Your request was rejected as a result of our safety system.'),
    ],
    [
      'a gateway that renames the code',
      { error: { message: 'ContentPolicyViolationError: content management policy', code: '400' } },
    ],
  ])('%s → content_filter, fail (not retried), with the provider’s reason', (_, body) => {
    const c = cls({ status: 400, body });
    expect(c).toMatchObject({ class: 'content_filter', action: 'fail', breaker: 'success' });
    expect(c.reason).toBe((body as { error: { message: string } }).error.message);
  });

  it('reads the reason from a thrown SDK error too', () => {
    const e = err('400 prompt is too long', {
      status: 400,
      error: anthropicMsg('prompt is too long: 3 tokens > 2 maximum').error,
    });
    expect(cls({ error: e })).toMatchObject({
      class: 'context_length',
      reason: 'prompt is too long: 3 tokens > 2 maximum',
    });
  });

  it.each([
    ['stream_cut', new StreamError('stream_cut', 'cut after 40 events')],
    ['stream_stall', new StreamError('stream_stall', 'no event for 30000 ms')],
  ] as const)('a StreamError %s → its class: retry, breaker failure, no accept', (kind, error) => {
    expect(cls({ error })).toMatchObject({ class: kind, action: 'retry', breaker: 'failure', accept: false });
    // the engine's verdict wins over what caused it (an abort, a socket error)
    const wrapped = new StreamError(kind, 'x', { cause: err('y', { code: 'ETIMEDOUT' }) });
    expect(cls({ error: wrapped }).class).toBe(kind);
  });
});

describe('classify: a 2xx that is a refusal', () => {
  const chat = (finish_reason: string, message: Record<string, unknown> = { role: 'assistant', content: null }) => ({
    object: 'chat.completion',
    model: 'gpt-4o',
    choices: [{ index: 0, message, finish_reason }],
  });
  const claude = (stop_reason: string, extra: Record<string, unknown> = {}) => ({
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [{ type: 'text', text: 'Hello..' }],
    stop_reason,
    ...extra,
  });

  it.each([
    ['OpenAI finish_reason: content_filter', chat('content_filter'), 'finish_reason: content_filter'],
    [
      'OpenAI with the model’s refusal text',
      chat('content_filter', { role: 'assistant', content: null, refusal: 'I can’t help with that.' }),
      'I can’t help with that.',
    ],
    ['Anthropic stop_reason: refusal', claude('refusal'), 'stop_reason: refusal'],
    [
      'Anthropic with stop_details',
      claude('refusal', { stop_details: { type: 'refusal', category: 'cyber', explanation: 'Declined: cyber harm.' } }),
      'Declined: cyber harm.',
    ],
    [
      'OpenAI Responses API incomplete for content_filter',
      { object: 'response', status: 'incomplete', incomplete_details: { reason: 'content_filter' } },
      'incomplete_details.reason: content_filter',
    ],
    [
      'a streamed OpenAI chunk',
      { object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'content_filter' }] },
      'finish_reason: content_filter',
    ],
    [
      'a streamed Anthropic message_delta',
      { type: 'message_delta', delta: { stop_reason: 'refusal' } },
      'stop_reason: refusal',
    ],
  ])('%s → content_filter, fail, breaker success, with the reason', (_, body, reason) => {
    for (const c of [cls({ status: 200, body }), cls({ status: 200, body: JSON.stringify(body) }), cls({ body })]) {
      expect(c).toMatchObject({ class: 'content_filter', action: 'fail', breaker: 'success', accept: true, reason });
    }
  });

  it('leaves ordinary answers a success, whatever their text says', () => {
    const answers = [
      chat('stop', { role: 'assistant', content: 'a content_filter is a refusal' }),
      chat('length'),
      claude('end_turn'),
      claude('max_tokens', { content: [{ type: 'text', text: 'about stop_reason: refusal' }] }),
      { object: 'response', status: 'completed', incomplete_details: null },
    ];
    for (const body of answers) {
      expect(cls({ status: 200, body }).class).toBe('success');
      expect(cls({ status: 200, body: JSON.stringify(body) }).class).toBe('success');
    }
    expect(cls({ status: 200, body: 'not json, mentions refusal' }).class).toBe('success');
    expect(cls({ status: 200, body: null })).toBe(classifyStatus(200));
  });

  it('does not read refusals into error answers or thrown errors', () => {
    expect(cls({ status: 500, body: chat('content_filter') }).class).toBe('server_error');
    expect(cls({ status: 200, body: chat('content_filter'), error: new Error('body broke') }).class).toBe('unknown');
  });
});

describe('classify: thrown errors', () => {
  it.each([
    ['ECONNRESET', 'connection'],
    ['ECONNREFUSED', 'connection'],
    ['EPIPE', 'connection'],
    ['ENOTFOUND', 'connection'],
    ['EAI_AGAIN', 'connection'],
    ['UND_ERR_SOCKET', 'connection'],
    ['UND_ERR_CLOSED', 'connection'],
    ['UND_ERR_CONNECT_TIMEOUT', 'timeout'],
    ['UND_ERR_HEADERS_TIMEOUT', 'timeout'],
    ['UND_ERR_BODY_TIMEOUT', 'timeout'],
    ['ETIMEDOUT', 'timeout'],
  ] as const)('code %s → %s (retry, breaker failure, not an accept)', (code, expected) => {
    expect(cls({ error: err('boom', { code }) })).toMatchObject({
      class: expected,
      action: 'retry',
      breaker: 'failure',
      accept: false,
      counted: true,
    });
  });

  it('looks through fetch’s TypeError to its cause', () => {
    const fetchFailed = (cause?: unknown) => new TypeError('fetch failed', { cause });
    expect(cls({ error: fetchFailed(err('x', { code: 'UND_ERR_HEADERS_TIMEOUT' })) }).class).toBe('timeout');
    expect(cls({ error: fetchFailed(err('x', { code: 'ECONNREFUSED' })) }).class).toBe('connection');
    expect(cls({ error: fetchFailed() }).class).toBe('connection');
  });

  it('reads AbortSignal.timeout and SDK connection errors by name', () => {
    expect(cls({ error: new DOMException('timed out', 'TimeoutError') }).class).toBe('timeout');
    expect(cls({ error: named('APIConnectionTimeoutError') }).class).toBe('timeout');
    expect(cls({ error: named('APIConnectionError') }).class).toBe('connection');
    expect(cls({ error: named('APIConnectionError', { cause: err('x', { code: 'ETIMEDOUT' }) }) }).class).toBe(
      'timeout',
    );
  });

  it('treats the caller’s abort as cancelled: fail, breaker ignored, not counted by the throttle', () => {
    const expected = { class: 'cancelled', action: 'fail', breaker: 'ignored', accept: false, counted: false };
    expect(cls({ error: new DOMException('aborted', 'AbortError') })).toMatchObject(expected);
    expect(cls({ error: named('APIUserAbortError') })).toMatchObject(expected);
    expect(cls({ cancelled: true, error: err('x', { code: 'ECONNRESET' }) })).toMatchObject(expected);
    expect(cls({ cancelled: true, status: 503 })).toMatchObject(expected);
  });

  it('treats an abort that was not the caller’s as the engine’s attempt timeout', () => {
    expect(cls({ cancelled: false, error: new DOMException('aborted', 'AbortError') }).class).toBe('timeout');
  });

  it('reads OpenAI SDK APIError objects (status, headers, inner error)', () => {
    const e = named('RateLimitError', {
      status: 429,
      headers: new Headers({ 'retry-after': '2' }),
      error: { message: 'quota', type: 'insufficient_quota', code: 'insufficient_quota', param: null },
    });
    expect(cls({ error: e })).toMatchObject({
      class: 'quota_exhausted',
      action: 'fallback',
      status: 429,
      retryAfterMs: 2000,
    });
    const ctx = named('BadRequestError', {
      status: 400,
      headers: {},
      error: { message: 'too long', type: 'invalid_request_error', code: 'context_length_exceeded' },
    });
    expect(cls({ error: ctx }).class).toBe('context_length');
  });

  it('reads Anthropic SDK APIError objects (error is the whole body)', () => {
    const e = named('InternalServerError', {
      status: 529,
      headers: { 'x-should-retry': 'true' },
      error: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    });
    expect(cls({ error: e })).toMatchObject({ class: 'overloaded', action: 'retry', status: 529 });
  });

  it('a connection error after a 200 is a connection error; any other throw after a 200 is unknown', () => {
    expect(cls({ status: 200, error: err('x', { code: 'ECONNRESET' }) }).class).toBe('connection');
    expect(cls({ status: 200, error: new SyntaxError('Unexpected end of JSON input') })).toMatchObject({
      class: 'unknown',
      action: 'fail',
      breaker: 'failure',
    });
  });

  it('gives unknown for unrecognised throws, and survives odd ones', () => {
    expect(cls({ error: new RangeError('bug') })).toMatchObject({ class: 'unknown', action: 'fail' });
    expect(cls({ error: 'a string' }).class).toBe('unknown');
    const loop = err('loop');
    (loop as { cause?: unknown }).cause = loop;
    expect(cls({ error: loop }).class).toBe('unknown');
  });
});

describe('classify: headers', () => {
  it('x-should-retry: true forces retry and keeps the class', () => {
    expect(cls({ status: 400, headers: { 'x-should-retry': 'true' } })).toMatchObject({
      class: 'bad_request',
      action: 'retry',
      breaker: 'success',
    });
    expect(cls({ status: 400, headers: new Headers({ 'X-Should-Retry': 'true' }) }).action).toBe('retry');
  });

  it('x-should-retry: false turns a retry into fail, keeps the class, leaves a fallback alone', () => {
    expect(cls({ status: 503, headers: { 'X-Should-Retry': 'false' } })).toMatchObject({
      class: 'server_error',
      action: 'fail',
      breaker: 'failure',
    });
    expect(cls({ error: err('x', { code: 'ECONNRESET' }), headers: { 'x-should-retry': 'false' } }).action).toBe(
      'fail',
    );
    expect(
      cls({ status: 400, body: { error: { code: 'context_length_exceeded' } }, headers: { 'x-should-retry': 'false' } })
        .action,
    ).toBe('fallback');
  });

  it('ignores x-should-retry on success and garbage values', () => {
    expect(cls({ status: 200, headers: { 'x-should-retry': 'false' } }).action).toBe('done');
    expect(cls({ status: 503, headers: { 'x-should-retry': 'maybe' } }).action).toBe('retry');
  });

  it('parses retry-after into retryAfterMs', () => {
    expect(cls({ status: 429, headers: { 'retry-after': '3' } }).retryAfterMs).toBe(3000);
    expect(cls({ status: 503, headers: { 'retry-after-ms': '150', 'retry-after': '1' } }).retryAfterMs).toBe(150);
    const now = Date.UTC(2015, 9, 21, 7, 28, 0);
    expect(cls({ status: 429, headers: { 'retry-after': 'Wed, 21 Oct 2015 07:28:30 GMT' } }, now).retryAfterMs).toBe(
      30_000,
    );
    // Without now a date cannot be resolved.
    expect(
      cls({ status: 429, headers: { 'retry-after': 'Wed, 21 Oct 2015 07:28:30 GMT' } }).retryAfterMs,
    ).toBeUndefined();
    expect(cls({ status: 200, headers: { 'retry-after': '3' } }).retryAfterMs).toBeUndefined();
  });

  it('allocates only when it must: same status, no extras → the shared object', () => {
    expect(classify({ status: 429, headers: {} })).toBe(classifyStatus(429));
    expect(classify({ status: 429, headers: { 'retry-after': '1' } })).not.toBe(classifyStatus(429));
  });
});

describe('classify: invariants', () => {
  it('never throws, whatever it is given', () => {
    fc.assert(
      fc.property(
        fc.record({
          status: fc.option(fc.integer({ min: -1, max: 1000 }), { nil: undefined }),
          body: fc.anything(),
          error: fc.anything(),
          headers: fc.option(fc.dictionary(fc.string(), fc.string()), { nil: undefined }),
        }),
        (r) => {
          const c = classify(r as AttemptResult, 0);
          return ERROR_CLASSES.includes(c.class);
        },
      ),
    );
  });

  it('keeps the documented policy: accepts are exactly the classes where the upstream answered', () => {
    const accepts = ['success', 'context_length', 'content_filter', 'auth', 'bad_request', 'not_found', 'conflict'];
    for (let s = 100; s < 600; s++) {
      const c = classifyStatus(s);
      expect(c.accept, String(s)).toBe(accepts.includes(c.class));
      if (c.action === 'done') expect(c.class).toBe('success');
    }
  });

  it('reaches every class of the taxonomy', () => {
    // (stream classes are reached in 'classify: LLM refusals and stream faults' below)
    expect([...seen].sort()).toEqual([...ERROR_CLASSES].sort());
  });
});
