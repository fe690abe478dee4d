import type { QuotaView } from './quota.js';
import { Detail } from './response.js';

/** An error answer as a provider would send it: headers to set and a JSON body. */
export interface ErrorShape {
  headers: Record<string, string>;
  body: object;
}

/** What the rate-limit headers describe: the model's quotas, read at `now`. */
export interface RateLimitState {
  requests?: QuotaView;
  tokens?: QuotaView;
  /** Time the quotas are read at, ms. */
  now: number;
  /** Unix ms of `now = 0`, for Anthropic's absolute reset times. @default 0 (`now` is Unix ms) */
  epochMs?: number;
}

/** `retry-after` in whole seconds (rounded up, as clients sleep at least that long) and, for OpenAI, `-ms`. */
function retryHeaders(retryAfterMs: number, withMs: boolean): Record<string, string> {
  if (!(retryAfterMs >= 0) || !Number.isFinite(retryAfterMs)) return {};
  const h: Record<string, string> = { 'retry-after': String(Math.ceil(retryAfterMs / 1000)) };
  if (withMs) h['retry-after-ms'] = String(Math.ceil(retryAfterMs));
  return h;
}

/**
 * An OpenAI-shaped error: `{ error: { message, type, param, code } }`. 429s tell a rate limit
 * (`rate_limit_exceeded`, type `requests` or `tokens`) from an empty account
 * (`insufficient_quota`, which retrying never fixes); 400 is `context_length_exceeded`;
 * 529 borrows Anthropic's `overloaded_error`; other 5xx are `server_error`. A 200 with
 * `Detail.MidStream` gives the error event a broken stream carries.
 */
export function openaiError(status: number, detail: number, retryAfterMs: number): ErrorShape {
  const headers = retryHeaders(retryAfterMs, true);
  const wait = retryAfterMs >= 0 ? ` Please try again in ${seconds(retryAfterMs)}.` : '';
  const body = (message: string, type: string, code: string | null, param: string | null = null) => ({
    headers,
    body: { error: { message, type, param, code } },
  });
  if (status === 429 && detail === Detail.InsufficientQuota) {
    return body(
      'You exceeded your current quota, please check your plan and billing details.',
      'insufficient_quota',
      'insufficient_quota',
    );
  }
  if (status === 429) {
    const tokens = detail === Detail.RateLimitTokens;
    const what = tokens ? 'tokens per min (TPM)' : 'requests per min (RPM)';
    return body(`Rate limit reached on ${what}.${wait}`, tokens ? 'tokens' : 'requests', 'rate_limit_exceeded');
  }
  if (status === 400 && detail === Detail.ContextLength) {
    return body(
      "This model's maximum context length was exceeded. Please reduce the length of the messages.",
      'invalid_request_error',
      'context_length_exceeded',
      'messages',
    );
  }
  if (status === 400 && detail === Detail.ContentFilter) {
    return body(
      'The response was filtered due to the prompt triggering the content management policy. Please modify your prompt and retry.',
      'invalid_request_error',
      'content_filter',
      'prompt',
    );
  }
  if (status === 400 && detail === Detail.PrefillRejected) {
    return body(
      'This model does not support assistant message prefill. The conversation must end with a user message.',
      'invalid_request_error',
      'unsupported_value',
      'messages',
    );
  }
  if (status === 529) return body('The server is overloaded. Please try again later.', 'overloaded_error', null);
  if (status >= 400 && status < 500) return body(`Bad request (status ${status}).`, 'invalid_request_error', null);
  if (status === 503) return body('The engine is currently overloaded, please try again later.', 'server_error', null);
  return body('The server had an error while processing your request. Sorry about that!', 'server_error', null);
}

/**
 * An Anthropic-shaped error: `{ type: 'error', error: { type, message } }` with `retry-after`
 * (seconds). An empty account is `billing_error` (Anthropic's own type for it), so clients
 * that read the body do not retry it like a rate limit.
 */
export function anthropicError(status: number, detail: number, retryAfterMs: number): ErrorShape {
  const headers = retryHeaders(retryAfterMs, false);
  const body = (type: string, message: string) => ({ headers, body: { type: 'error', error: { type, message } } });
  if (status === 429 && detail === Detail.InsufficientQuota) {
    return body('billing_error', 'Your credit balance is too low to access the Anthropic API.');
  }
  if (status === 429) {
    const what = detail === Detail.RateLimitTokens ? 'tokens' : 'requests';
    return body(
      'rate_limit_error',
      `This request would exceed the rate limit for your organization on ${what} per minute.`,
    );
  }
  if (status === 400 && detail === Detail.ContextLength)
    return body('invalid_request_error', 'prompt is too long: tokens > maximum');
  if (status === 400 && detail === Detail.ContentFilter)
    return body('invalid_request_error', 'Output blocked by content filtering policy');
  if (status === 400 && detail === Detail.PrefillRejected)
    return body(
      'invalid_request_error',
      'This model does not support assistant message prefill. The conversation must end with a user message.',
    );
  if (status === 529 || status === 503 || detail === Detail.Overloaded) return body('overloaded_error', 'Overloaded');
  if (status >= 400 && status < 500) return body('invalid_request_error', `Bad request (status ${status}).`);
  return body('api_error', 'Internal server error');
}

/**
 * Rate-limit headers of both providers for the quotas a model has:
 * OpenAI `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` (reset as a Go-style
 * duration: `1s`, `6m0s`, `120ms`) and Anthropic `anthropic-ratelimit-{requests,tokens}-
 * {limit,remaining,reset}` (reset as an RFC 3339 time, whole seconds, rounded up).
 */
export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  const h: Record<string, string> = {};
  const add = (q: QuotaView | undefined, what: 'requests' | 'tokens') => {
    if (q === undefined) return;
    const limit = String(q.limit);
    const remaining = String(Math.floor(q.remaining(state.now)));
    const reset = q.resetMs(state.now);
    h[`x-ratelimit-limit-${what}`] = limit;
    h[`x-ratelimit-remaining-${what}`] = remaining;
    h[`x-ratelimit-reset-${what}`] = duration(reset);
    h[`anthropic-ratelimit-${what}-limit`] = limit;
    h[`anthropic-ratelimit-${what}-remaining`] = remaining;
    h[`anthropic-ratelimit-${what}-reset`] = rfc3339((state.epochMs ?? 0) + state.now + reset);
  };
  add(state.requests, 'requests');
  add(state.tokens, 'tokens');
  return h;
}

/**
 * A duration as Go prints it (OpenAI's headers come from Go): under a second in ms (`120ms`),
 * else h/m/s with fractional seconds and no trailing zeros (`1s`, `1.5s`, `6m0s`, `1h0m0s`).
 */
export function duration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms));
  if (total === 0) return '0s';
  if (total < 1000) return `${total}ms`;
  const h = Math.floor(total / 3_600_000);
  const m = Math.floor((total % 3_600_000) / 60_000);
  const s = seconds(total % 60_000);
  if (h > 0) return `${h}h${m}m${s}`;
  if (m > 0) return `${m}m${s}`;
  return s;
}

/** Seconds with up to three decimals, trailing zeros dropped: `1s`, `1.5s`, `0.25s`. */
function seconds(ms: number): string {
  return `${Number((Math.ceil(ms) / 1000).toFixed(3))}s`;
}

function rfc3339(unixMs: number): string {
  return new Date(Math.ceil(unixMs / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
