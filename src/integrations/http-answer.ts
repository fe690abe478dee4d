import type { AttemptResult } from '../engine/classify.js';
import type { HeaderSource } from '../engine/headers.js';

/** Error bodies up to this size are read for classification (`insufficient_quota`, context length). */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

const decoder = new TextDecoder();

/**
 * An HTTP answer as the engine's classifier sees it. 2xx → `{ status, headers }`, with the body
 * only when a small one may be a refusal (`finish_reason: content_filter`, `stop_reason:
 * refusal`: `classify` calls it content_filter); otherwise a success's body says nothing.
 * Otherwise the body is parsed as JSON when it is small and looks like JSON, and passed as
 * text when not, so `classify` finds the provider's error `code`/`type` and message.
 */
export function answerResult(
  status: number,
  headers: HeaderSource,
  body: Uint8Array | string | undefined,
): AttemptResult {
  if (status >= 200 && status < 300) return successResult(status, headers, body);
  if (body === undefined || body.length === 0 || body.length > MAX_ERROR_BODY_BYTES) return { status, headers };
  const text = typeof body === 'string' ? body : decoder.decode(body);
  const t = text.trimStart();
  if (t[0] === '{') {
    try {
      return { status, headers, body: JSON.parse(t) as unknown };
    } catch {
      // Not JSON after all: classify reads plain text too.
    }
  }
  return { status, headers, body: text };
}

function successResult(status: number, headers: HeaderSource, body: Uint8Array | string | undefined): AttemptResult {
  if (body === undefined || body.length === 0 || body.length > MAX_ERROR_BODY_BYTES) return { status, headers };
  const text = typeof body === 'string' ? body : decoder.decode(body);
  return text.includes('"content_filter"') || text.includes('"refusal"')
    ? { status, headers, body: text }
    : { status, headers };
}

/**
 * The result of a streamed answer that broke after its 2xx had been passed on: its bytes are
 * already with the caller, so it must not be retried (`x-should-retry: false`) but still
 * counts against the upstream's health. `cancelled` says whether the caller's own signal ended
 * it (then nothing is held against the upstream).
 */
export function brokenStreamResult(error: unknown, cancelled: boolean): AttemptResult {
  return { error, headers: NO_RETRY, cancelled };
}

const NO_RETRY: Record<string, string> = { 'x-should-retry': 'false' };
