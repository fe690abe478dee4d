import type { ServedModelStats } from './upstream-host.js';

/** What the server itself saw, apart from the model. */
export interface HttpCounters {
  /** Requests received, every route. */
  received: number;
  /** Answered 4xx by the server before the model saw them (bad input, unknown route or model, too large). */
  invalid: number;
  /** Chat requests whose client went away before the answer (the model was told: `cancel`). */
  clientClosed: number;
  /** Errors inside the server (a bug): answered 500 or the connection closed; it keeps serving. */
  internalErrors: number;
}

/** `GET /_stormlab/stats`. */
export interface FakeUpstreamStats {
  /** ms since the server started: the timeline fault phases are written on. */
  nowMs: number;
  /** Chat requests whose answer is not finished. */
  inFlight: number;
  http: HttpCounters;
  /** Per model: attempts, answers by status ('0' = reset) and by detail, busy, queued, tokens, wasted tokens, cancels, quotas. */
  models: ServedModelStats[];
}
