import { describe, it, expect } from 'vitest';
import { anthropicError, duration, openaiError, rateLimitHeaders } from '../../src/upstream/provider-shapes.js';
import { Detail } from '../../src/upstream/response.js';
import { Quota } from '../../src/upstream/quota.js';
import { classify } from '../../src/engine/classify.js';

describe('openaiError', () => {
  it('shapes a requests rate limit with retry-after (s, rounded up) and retry-after-ms', () => {
    const { headers, body } = openaiError(429, Detail.RateLimitRequests, 1_500);
    expect(headers).toEqual({ 'retry-after': '2', 'retry-after-ms': '1500' });
    expect(body).toEqual({
      error: {
        message: expect.stringContaining('requests per min (RPM)'),
        type: 'requests',
        param: null,
        code: 'rate_limit_exceeded',
      },
    });
    expect((body as { error: { message: string } }).error.message).toContain('Please try again in 1.5s.');
  });

  it('shapes a tokens rate limit, and a 429 from a fault as a requests limit', () => {
    expect(openaiError(429, Detail.RateLimitTokens, 58_000).body).toMatchObject({
      error: { type: 'tokens', code: 'rate_limit_exceeded' },
    });
    expect(openaiError(429, Detail.RateLimitTokens, 58_000).headers['retry-after']).toBe('58');
    expect(openaiError(429, Detail.Fault, -1)).toEqual({
      headers: {},
      body: { error: expect.objectContaining({ type: 'requests', code: 'rate_limit_exceeded' }) },
    });
  });

  it('shapes insufficient_quota without a retry hint', () => {
    const { headers, body } = openaiError(429, Detail.InsufficientQuota, -1);
    expect(headers).toEqual({});
    expect(body).toEqual({
      error: {
        message: expect.stringContaining('exceeded your current quota'),
        type: 'insufficient_quota',
        param: null,
        code: 'insufficient_quota',
      },
    });
  });

  it('shapes context length, 5xx, 529 and a midstream break', () => {
    expect(openaiError(400, Detail.ContextLength, -1).body).toEqual({
      error: {
        message: expect.stringContaining('maximum context length'),
        type: 'invalid_request_error',
        param: 'messages',
        code: 'context_length_exceeded',
      },
    });
    expect(openaiError(500, Detail.Fault, -1).body).toMatchObject({
      error: { type: 'server_error', param: null, code: null },
    });
    expect(openaiError(503, Detail.Fault, -1).body).toMatchObject({ error: { type: 'server_error' } });
    expect(openaiError(529, Detail.Overloaded, -1).body).toMatchObject({ error: { type: 'overloaded_error' } });
    expect(openaiError(200, Detail.MidStream, -1).body).toMatchObject({ error: { type: 'server_error' } });
  });

  it('is classified by the engine as the provider would be', () => {
    const cls = (status: number, detail: number, retry: number) => {
      const { headers, body } = openaiError(status, detail, retry);
      return classify({ status, headers, body });
    };
    expect(cls(429, Detail.RateLimitRequests, 2_000)).toMatchObject({
      class: 'rate_limited',
      action: 'retry',
      retryAfterMs: 2_000,
    });
    expect(cls(429, Detail.InsufficientQuota, -1)).toMatchObject({ class: 'quota_exhausted' });
    expect(cls(400, Detail.ContextLength, -1)).toMatchObject({ class: 'context_length' });
    expect(cls(529, Detail.Overloaded, -1)).toMatchObject({ class: 'overloaded' });
    expect(cls(503, Detail.Fault, -1)).toMatchObject({ class: 'server_error', action: 'retry' });
  });
});

describe('anthropicError', () => {
  const err = (status: number, detail: number, retry = -1) => anthropicError(status, detail, retry);

  it('shapes each error as { type: error, error: { type, message } }', () => {
    expect(err(429, Detail.RateLimitTokens, 2_001)).toEqual({
      headers: { 'retry-after': '3' },
      body: {
        type: 'error',
        error: { type: 'rate_limit_error', message: expect.stringContaining('tokens per minute') },
      },
    });
    expect(err(529, Detail.Overloaded).body).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
    });
    expect(err(503, Detail.Fault).body).toMatchObject({ error: { type: 'overloaded_error' } });
    expect(err(500, Detail.Fault).body).toMatchObject({ error: { type: 'api_error' } });
    expect(err(400, Detail.ContextLength).body).toMatchObject({
      error: { type: 'invalid_request_error', message: expect.stringContaining('prompt is too long') },
    });
    expect(err(429, Detail.InsufficientQuota).body).toMatchObject({ error: { type: 'billing_error' } });
    expect(err(500, Detail.Fault).headers).toEqual({});
  });

  it('is classified by the engine as the provider would be', () => {
    const cls = (status: number, detail: number) => classify({ status, ...err(status, detail) });
    expect(cls(429, Detail.RateLimitRequests).class).toBe('rate_limited');
    expect(cls(429, Detail.InsufficientQuota).class).toBe('quota_exhausted');
    expect(cls(400, Detail.ContextLength).class).toBe('context_length');
    expect(cls(529, Detail.Overloaded).class).toBe('overloaded');
  });
});

describe('rateLimitHeaders', () => {
  it('gives OpenAI and Anthropic headers for the quotas present', () => {
    const requests = new Quota(60);
    const tokens = new Quota(150_000);
    requests.take(1, 0);
    requests.take(1, 1_000);
    tokens.take(1_000, 1_000);
    const h = rateLimitHeaders({ requests, tokens, now: 1_500, epochMs: Date.UTC(2025, 0, 1) });
    expect(h).toEqual({
      'x-ratelimit-limit-requests': '60',
      'x-ratelimit-remaining-requests': '58',
      'x-ratelimit-reset-requests': '59.5s',
      'x-ratelimit-limit-tokens': '150000',
      'x-ratelimit-remaining-tokens': '149000',
      'x-ratelimit-reset-tokens': '59.5s',
      'anthropic-ratelimit-requests-limit': '60',
      'anthropic-ratelimit-requests-remaining': '58',
      'anthropic-ratelimit-requests-reset': '2025-01-01T00:01:01Z',
      'anthropic-ratelimit-tokens-limit': '150000',
      'anthropic-ratelimit-tokens-remaining': '149000',
      'anthropic-ratelimit-tokens-reset': '2025-01-01T00:01:01Z',
    });
  });

  it('leaves out quotas the model does not have', () => {
    expect(rateLimitHeaders({ now: 0 })).toEqual({});
    const h = rateLimitHeaders({ requests: new Quota(10), now: Date.UTC(2025, 5, 1, 12) });
    expect(Object.keys(h).some((k) => k.includes('tokens'))).toBe(false);
    expect(h['x-ratelimit-reset-requests']).toBe('0s');
    expect(h['anthropic-ratelimit-requests-reset']).toBe('2025-06-01T12:00:00Z');
  });

  it('formats resets as Go durations, as OpenAI does', () => {
    expect([0, 20, 999, 1_000, 1_500, 59_999, 60_000, 360_000, 61_250, 3_600_000, 3_723_000].map(duration)).toEqual([
      '0s',
      '20ms',
      '999ms',
      '1s',
      '1.5s',
      '59.999s',
      '1m0s',
      '6m0s',
      '1m1.25s',
      '1h0m0s',
      '1h2m3s',
    ]);
    expect(duration(0.2)).toBe('1ms');
  });
});
