import type { Dist } from './distribution.js';
import type { ToolConfig } from './tool-config.js';

/** One model the upstream serves (a deployment with its own capacity, quotas and faults). */
export interface ModelConfig {
  name: string;
  /** Requests served at once. */
  slots: number;
  /** Requests waiting for a slot; past it the upstream sheds with `shedStatus`. */
  queue: number;
  /** Status for requests shed past the queue. @default 529 */
  shedStatus: number;
  /** Time to first token, ms. */
  ttftMs: Dist;
  /** Time per output token, ms. */
  tpotMs: Dist;
  /** Requests per minute quota; 429 `rate_limit_exceeded` (limit `requests`) past it. @default none */
  rpm?: number;
  /** Tokens per minute quota (prompt + max output, as providers reserve); 429 (limit `tokens`). @default none */
  tpm?: number;
  /** Service time grows by this factor × (busy slots / slots): load stretches it. @default 0 */
  loadStretch: number;
  /** Largest prompt + output the model takes; larger requests get 400 `context_length_exceeded`. @default Infinity */
  contextTokens: number;
  /**
   * How long the fake upstream's HTTP answers run when `max_tokens` does not cut them (a
   * distribution of tokens), or `max`: every answer is `max_tokens` long. Only the fake
   * upstream's HTTP routes read it: the simulator and the live driver ask for their traffic's
   * completion tokens exactly. @default lognormal, median 300, p99 2000
   */
  answerTokens?: AnswerTokens;
  /**
   * Whether the model continues an answer whose start it is given as a trailing assistant
   * message (`prefill`: older Claude models, OpenAI-compatible servers with continue-final-message
   * support). Absent, the model answers such a request with the provider's 400, as recent Claude
   * models do; a `prefill-rejected` phase makes a declaring model do the same while it lasts.
   * @default none
   */
  continuation?: Continuation;
}

/** How a model takes a trailing assistant message: `prefill`, it continues that text. */
export type Continuation = 'prefill';

/** A model's natural answer length: a distribution of tokens, or `max` (`max_tokens` exactly). */
export type AnswerTokens = Dist | 'max';

/** What a fault does while it is active. */
export type FaultKind =
  /** A share (`rate`) of requests answered at once with an error drawn from `status` weights. */
  | 'errors'
  /** Every request answered at once with `status` (default 503). */
  | 'outage'
  /** Service time multiplied by `factor`. */
  | 'latency'
  /** A share of requests whose connection is reset (status 0). */
  | 'reset'
  /** A share of requests that never answer (until the caller gives up). */
  | 'hang'
  /** A share of requests that fail mid-stream after the 200 and some tokens. */
  | 'midstream'
  /** The 429 for everything: quota exhausted (`insufficient_quota`), not retryable. */
  | 'quota'
  /** A share of requests whose first token comes `ttftMs` after service start (at the earliest). */
  | 'slow-first-token'
  /** A share of requests that, after `afterTokens` tokens, send nothing for `stallMs` (absent: forever) with the connection open. */
  | 'stall'
  /** A share of requests whose stream ends cleanly after `afterTokens` tokens, without its terminal event. */
  | 'cut'
  /** A share of streams carrying one event that is not valid JSON, mid-stream. */
  | 'malformed'
  /** A share of streams that finish (`finish_reason`, `message_delta`) but never send `[DONE]` / `message_stop`. */
  | 'missing-done'
  /** A model declaring `continuation: prefill` refuses it while the phase lasts: requests ending in an assistant prefill get the 400 an undeclaring model gives. */
  | 'prefill-rejected'
  /** A share of requests filtered: a 200 ending `content_filter` after `afterTokens` (`mode: finish`) or a 400 (`mode: reject`). */
  | 'content-filter'
  /** The model's context window is `contextTokens` while it lasts: larger requests get 400 `context_length_exceeded`. */
  | 'context-length';

/** How a `content-filter` phase answers. */
export type ContentFilterMode = 'finish' | 'reject';

export interface FaultPhase {
  kind: FaultKind;
  /** When it starts and ends, ms from the start of the run. */
  fromMs: number;
  toMs: number;
  /** Which model it hits; all models when absent. */
  model?: string;
  /** Which route it hits (`/v1/chat/completions`; only servers that have routes: serve, proxy); all when absent. */
  route?: string;
  /** Share of requests hit, for errors / reset / hang / midstream. @default 1 */
  rate: number;
  /** Status weights for `errors` (e.g. `{ 503: 0.7, 429: 0.3 }`) or the status of an `outage`. */
  status?: Record<string, number> | number;
  /** Latency multiplier for `latency`. @default 1 */
  factor?: number;
  /**
   * Time added, ms, a constant or a distribution drawn per request: `latency` adds it before the
   * answer starts (its first token, or the whole answer unstreamed), `slow-first-token` to the
   * first token only. Overlapping `latency` phases add up.
   */
  addMs?: Dist;
  /** `slow-first-token`: the first token's time after service start, ms. */
  ttftMs?: number;
  /** `stall`, `cut`: tokens sent before the fault; `content-filter` (finish): tokens before the filter (default 0). */
  afterTokens?: number;
  /** `stall`: how long nothing is sent, ms; absent (or Infinity): forever. */
  stallMs?: number;
  /** `content-filter`: a 200 ending `content_filter` (`finish`, default) or a 400 (`reject`). */
  mode?: ContentFilterMode;
  /** `context-length`: the context window while the phase lasts, tokens (prompt + max output). */
  contextTokens?: number;
}

export interface UpstreamConfig {
  models: ModelConfig[];
  faults: FaultPhase[];
  /** Whether the upstream stops work a caller abandoned (timeout, cancel). @default false */
  cancelOnDisconnect: boolean;
  /** The tool service beside the model upstream: the tools the tree's tool calls reach. @default none */
  tools?: ToolConfig[];
  /** More names for models (`gpt-4o-mini: primary`). Only the fake upstream's HTTP routes read it. */
  aliases?: Record<string, string>;
  /** How the fake upstream's model uses the tools a request offers. Only its HTTP routes read it. */
  toolPolicy?: Partial<ToolPolicy>;
}

/**
 * How the model uses the tools a request offers under `tool_choice: auto` (`required`, `none`
 * and a forced tool are obeyed whatever this says).
 */
export interface ToolPolicy {
  /** Tool-calling turns before the model answers in text ("call N tools then answer"). */
  rounds: number;
  /** Tool calls in one turn (parallel tool calls). */
  parallel: number;
  /** Which tools a turn calls: in the order offered, cycling (`cycle`), or drawn from the seed (`seeded`). */
  pick: 'cycle' | 'seeded';
}
