import { ShedError, type ShedReason } from '../engine/errors.js';
import type { StreamProvider } from './stream-event.js';

/**
 * A local refusal as an HTTP answer an SDK understands, instead of a connection error it would
 * retry: 429 when the caller is over a limit (its own rate, tokens, concurrency), 503 when the
 * upstream is being protected (breaker, throttle, retry budget, deadline). It says when to come
 * back (`retry-after-ms`, `retry-after`) and that the client must not retry on its own
 * (`x-should-retry: false`: the engine already did what retrying was worth), and its body names
 * the reason in the provider's error shape.
 */
export interface ShedAnswer {
  status: 429 | 503;
  headers: Record<string, string>;
  body: string;
}

const CALLER_SIDE: ReadonlySet<ShedReason> = new Set<ShedReason>(['limit', 'concurrency', 'queue_timeout']);

export function shedAnswer(err: ShedError, provider: StreamProvider): ShedAnswer {
  const status = CALLER_SIDE.has(err.reason) ? 429 : 503;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-should-retry': 'false',
    'x-stormlab-shed': err.reason,
  };
  const after = err.retryAfterMs;
  if (after !== undefined && Number.isFinite(after) && after >= 0) {
    headers['retry-after-ms'] = String(Math.ceil(after));
    headers['retry-after'] = String(Math.ceil(after / 1000));
  }
  const message = err.message;
  const body =
    provider === 'anthropic'
      ? { type: 'error', error: { type: status === 429 ? 'rate_limit_error' : 'overloaded_error', message } }
      : { error: { message, type: 'stormlab_shed', param: null, code: err.reason } };
  return { status, headers, body: JSON.stringify(body) };
}

/** The same refusal without its `cause` (the engine's last attempt outcome, an internal object). */
export function publicShedError(err: ShedError): ShedError {
  if (err.cause === undefined) return err;
  return new ShedError(err.reason, { retryAfterMs: err.retryAfterMs, detail: err.detail });
}
