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
} as const;

/** Detail names by code, for stats and reports. */
export const DETAIL_NAMES: readonly string[] = Object.keys(Detail);

export interface UpstreamListener {
  /**
   * The answer to request `reqId`: HTTP status (0 = reset), a `Detail`, tokens used (prompt +
   * completion actually processed; 0 for refusals), a retry-after hint in ms (-1 = none), at `now`.
   */
  onResponse(reqId: number, status: number, detail: number, tokens: number, retryAfterMs: number, now: number): void;
}
