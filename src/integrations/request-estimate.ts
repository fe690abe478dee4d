import { estimateChatTokens, type ChatTokenRequest, type TokenEstimator } from '../engine/token-estimator.js';
import type { HttpGuard, HttpRequestInfo } from './engine-http-options.js';

/** JSON request bodies larger than this are not parsed for an estimate (they still go out). */
const MAX_JSON_BYTES = 8 * 1024 * 1024;

const decoder = new TextDecoder();

/**
 * The parsed JSON of a request body given as text or bytes, or undefined when it is not a JSON
 * object (or too large to be worth parsing). Never throws.
 */
export function readJsonBody(body: string | Uint8Array | undefined): unknown {
  if (body === undefined || body.length === 0 || body.length > MAX_JSON_BYTES) return undefined;
  const text = typeof body === 'string' ? body : decoder.decode(body);
  const t = text.trimStart();
  if (t[0] !== '{') return undefined;
  try {
    return JSON.parse(t) as unknown;
  } catch {
    return undefined;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * The reservation for a request body: `estimateChatTokens` (messages + system + prompt +
 * max output) plus a string `input` (embeddings, Responses API). 0 for bodies that are not
 * an LLM request (no messages, prompt, system or input): nothing to count.
 */
export function estimateRequestTokens(json: unknown, estimator: TokenEstimator | undefined): number {
  if (!isObject(json)) return 0;
  const input = json.input;
  if (json.messages === undefined && json.prompt === undefined && json.system === undefined && input === undefined)
    return 0;
  const tokens = estimateChatTokens(json as ChatTokenRequest, estimator);
  if (typeof input !== 'string') return tokens;
  return tokens + (estimator ? estimator.estimate(input) : Math.ceil(input.length / 3));
}

/** True for `{ "stream": true }` bodies: the answer is an event stream, not one JSON document. */
export function isStreamRequest(json: unknown): boolean {
  return isObject(json) && json.stream === true;
}

/** The limiter keys of a request: the user's `keys(req)`, with `model` from the body by default. */
export function requestKeys(h: HttpGuard, info: HttpRequestInfo): Record<string, string> | undefined {
  const model = isObject(info.json) && typeof info.json.model === 'string' ? info.json.model : undefined;
  const own = h.keys?.(info);
  if (model === undefined) return own;
  return own === undefined ? { model } : { model, ...own };
}
