/**
 * What the upstream answered, as plain numbers (the simulator delivers millions of these a
 * second: no object per response). `status` is the HTTP status; 0 means the connection was
 * reset and no HTTP answer came. A `hang` never answers: only the caller's cancel ends it.
 */
export const Detail = {
  None: 0,
  /** 429: the requests-per-minute quota is spent (`rate_limit_exceeded`, limit `requests`). */
  RateLimitRequests: 1,
  /** 429: the tokens-per-minute quota is spent (`rate_limit_exceeded`, limit `tokens`). */
  RateLimitTokens: 2,
  /** 429: the account is out of quota (`insufficient_quota`): retrying never helps. */
  InsufficientQuota: 3,
  /** Shed past the queue (529 `overloaded_error` or 503). */
  Overloaded: 4,
  /** 200 whose stream broke after some tokens. */
  MidStream: 5,
  /** 400 `context_length_exceeded`. */
  ContextLength: 6,
  /** An error injected by a fault phase (`errors`, `outage`). */
  Fault: 7,
  /** Status 0: the connection was reset. */
  Reset: 8,
  /** 200 whose stream ended cleanly after some tokens, without its terminal event (`cut`). */
  Cut: 9,
  /** 200, complete, with one malformed event mid-stream (a body that is not JSON when not streamed). */
  Malformed: 10,
  /** 200, complete with its finish, but no `[DONE]` / `message_stop`. */
  MissingDone: 11,
  /** 200 ending `finish_reason: content_filter` (Anthropic `refusal`), or a 400 content-policy error. */
  ContentFilter: 12,
  /** 400: the model does not take an assistant prefill. */
  PrefillRejected: 13,
  /** 200, complete, after a stall with the connection open. */
  Stalled: 14,
  /** 200, complete, after a stretched first token. */
  SlowFirstToken: 15,
} as const;

export type DetailCode = (typeof Detail)[keyof typeof Detail];

/** Detail names by code, for stats and reports. */
export const DETAIL_NAMES: readonly string[] = Object.keys(Detail);

/** Bits of a request's `flags` at submission. */
export const RequestFlag = {
  /** The caller reads a stream: the model reports its first token and stalls (`onStream`). */
  Stream: 1,
  /** The request's last message is an assistant prefill (`prefill-rejected` refuses it). */
  Prefill: 2,
} as const;

/** What `onStream` reports. */
export const StreamEvent = {
  /** The first token: `ms` is the token time still to come (stalls not counted), `tokens` the tokens the stream will carry. */
  FirstToken: 1,
  /** Nothing more for `ms` (Infinity: forever) after `tokens` tokens, the connection open. */
  Stall: 2,
} as const;

export interface UpstreamListener {
  /**
   * The answer to request `reqId`: HTTP status (0 = reset), a `Detail`, tokens used (prompt +
   * completion actually processed; 0 for refusals), a retry-after hint in ms (-1 = none), at `now`.
   */
  onResponse(reqId: number, status: number, detail: number, tokens: number, retryAfterMs: number, now: number): void;
  /**
   * Streamed requests only (`RequestFlag.Stream`), before `onResponse` and strictly earlier: a
   * `StreamEvent` of request `reqId`. Not called for a request whose caller gave up.
   */
  onStream?(reqId: number, event: number, ms: number, tokens: number, now: number): void;
}
