import type { ErrorShape } from '../upstream/provider-shapes.js';

/** A chat request as the model needs it, read from either provider's body. */
export interface ChatRequest {
  model: string;
  /** Estimated with `estimateChatTokens` (chars / 3 plus a few per message). */
  promptTokens: number;
  /** The output token limit asked for (or the server's default): no choice runs longer. */
  maxTokens: number;
  /** OpenAI's `n`: how many choices the answer has (1 elsewhere). */
  choices: number;
  stream: boolean;
  /** OpenAI `stream_options.include_usage`: a last chunk carries the usage. */
  includeUsage: boolean;
}

/** A 4xx the server gives before the model sees the request. */
export interface Invalid {
  status: number;
  message: string;
  /** The field at fault, when one is (OpenAI's `param`). */
  param: string | null;
  code: string | null;
}

export type Parsed = { ok: true; chat: ChatRequest } | ({ ok: false } & Invalid);

/** What the answer's bodies and events are built from. */
export interface AnswerInfo {
  /** `chatcmpl-…`, `msg_01…` or `resp_…`: unique across requests, servers and runs. */
  id: string;
  model: string;
  /** Unix seconds. */
  created: number;
  promptTokens: number;
  includeUsage: boolean;
}

/**
 * One provider's wire format: how its requests read and how its answers, streams and errors
 * look. The server and the exchange are written once against this.
 */
export interface Dialect {
  readonly name: 'openai' | 'anthropic';
  /** Prefix of the rate-limit headers this provider sends (`rateLimitHeaders` gives both). */
  readonly rateLimitPrefix: string;
  readonly requestIdHeader: string;
  /** A new answer id, random and shaped as the provider's (`providerIds`). */
  newId(): string;
  parse(body: unknown, defaultMaxTokens: number): Parsed;
  /** The body of a refusal by the server itself (bad input, unknown model or route, too large). */
  invalid(e: Invalid): object;
  unknownModel(model: string): Invalid;
  /** The status this provider sends for a model's status (OpenAI has no 529: it answers overload with 503). */
  wireStatus?(status: number): number;
  /** The error answer to a model outcome (a refusal, an injected fault, a broken stream). */
  error(status: number, detail: number, retryAfterMs: number): ErrorShape;
  modelList(names: readonly string[], created: number): object;
  completion(a: AnswerInfo, text: string, completionTokens: number): object;
  /** SSE text sent with the headers. */
  streamOpen(a: AnswerInfo): string;
  streamDelta(a: AnswerInfo, text: string): string;
  /** SSE text that ends a stream that finished. */
  streamClose(a: AnswerInfo, completionTokens: number): string;
  /** SSE text carrying the error of a stream that breaks. */
  streamError(e: ErrorShape): string;
}

/** A field check's failure, as each dialect words it. */
export const describeType = (v: unknown): string =>
  v === null
    ? 'null'
    : Array.isArray(v)
      ? 'an array'
      : typeof v === 'number'
        ? Number.isInteger(v)
          ? 'an integer'
          : 'a decimal'
        : typeof v === 'object'
          ? 'an object'
          : `a ${typeof v}`;

export const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);
