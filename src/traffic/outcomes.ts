import { classify, classifyStatus, type Classification } from '../engine/classify.js';
import { Detail } from '../upstream/response.js';

/** How a call ended, as its parent sees it. */
export const Code = {
  Ok: 0,
  /** Failed in a way worth retrying (an upstream 5xx/429, a timeout below). */
  Retryable: 1,
  /** Failed in a way not worth retrying: refused locally by the engine, or a caller error. */
  NoRetry: 2,
  /** This attempt ran out of time at this layer. */
  Timeout: 3,
} as const;

// What a parent's attempt looks like when its children fail: an agent service answering 503,
// or 503 with `x-should-retry: false` when the failure below must not be retried (the engine
// shed it; retrying would only add load). Retry policies classify these like any answer.
export const CHILD_RETRYABLE = classifyStatus(503);
export const CHILD_NO_RETRY = classify({ status: 503, headers: { 'x-should-retry': 'false' } });
export const TIMEOUT = classify({ error: { name: 'TimeoutError', message: 'attempt timed out' } });
const RESET = classify({ error: { code: 'ECONNRESET', message: 'connection reset' } });
/** A stream or body that broke after the 200 (a socket error, an SDK's parse error). */
export const MID_STREAM = classify({ error: { code: 'UND_ERR_SOCKET', message: 'stream broke after 200' } });
const QUOTA = classify({
  status: 429,
  body: { error: { type: 'insufficient_quota', code: 'insufficient_quota', message: 'quota' } },
});
const CONTEXT = classify({ status: 400, body: { error: { code: 'context_length_exceeded', message: 'too long' } } });

/** Classification of a parent attempt from its outcome code. */
export function classifyCode(code: number): Classification {
  return code === Code.Ok
    ? classifyStatus(200)
    : code === Code.Timeout
      ? TIMEOUT
      : code === Code.NoRetry
        ? CHILD_NO_RETRY
        : CHILD_RETRYABLE;
}

/** Classification of an upstream answer (status 0 = connection reset). */
export function classifyUpstream(status: number, detail: number, retryAfterMs: number): Classification {
  let base: Classification;
  if (status === 0) base = RESET;
  // A body cut short or not JSON (a stream fault on a call not streamed) breaks like a stream.
  else if (detail === Detail.MidStream || detail === Detail.Cut || detail === Detail.Malformed) base = MID_STREAM;
  else if (detail === Detail.InsufficientQuota) base = QUOTA;
  else if (detail === Detail.ContextLength) base = CONTEXT;
  else base = classifyStatus(status);
  return retryAfterMs >= 0 && base.action !== 'done' ? { ...base, retryAfterMs } : base;
}

/** The code a call reports upward after its last attempt was classified `cls`. */
export function codeOf(cls: Classification): number {
  if (cls.action === 'done') return Code.Ok;
  return cls.action === 'retry' ? Code.Retryable : Code.NoRetry;
}
