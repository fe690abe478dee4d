import type { Dist } from './distribution.js';

/**
 * What a tool fault does while it is active. `errors`, `outage` and `latency` are the model's;
 * `hang` never answers and never does the effect; `lost` does the effect and then loses the
 * answer — the caller times out on a side effect that happened, the classic duplicate.
 */
export type ToolFaultKind = 'errors' | 'outage' | 'latency' | 'hang' | 'lost';

export interface ToolFaultPhase {
  kind: ToolFaultKind;
  /** On [fromMs, toMs), ms from the start of the run. */
  fromMs: number;
  toMs: number;
  /** Share of requests hit (`errors`, `hang`, `lost`). @default 1 */
  rate: number;
  /** Status weights for `errors`, or the status of an `outage`. */
  status?: Record<string, number> | number;
  /** Service time multiplier for `latency`. */
  factor?: number;
}

/** One tool the tool service serves (`gmail.send`, `tickets.create`). */
export interface ToolConfig {
  name: string;
  /** Requests served at once. */
  slots: number;
  /** Requests waiting for a slot; past it the service answers 503. */
  queue: number;
  /** Service time, ms; the effect happens at its end, then the answer goes back. */
  latencyMs: Dist;
  /** Requests per second it accepts (a bucket holding one second of them); 429 with `retry-after` past it. @default none */
  rps?: number;
  faults: ToolFaultPhase[];
}

export const TOOL_DEFAULTS = {
  slots: 64,
  queue: 256,
  latencyMs: 200,
  /**
   * How long a keyed request holds its idempotency key `in_progress` at the service: longer
   * than any service time here, so a lease never runs out under a slow effect.
   */
  leaseMs: 60_000,
  /**
   * The retry-after of a 409 for a key in progress: about one service time, not the lease left
   * (a caller told to wait out a 60 s lease would give up on its deadline instead).
   */
  conflictRetryAfterMs: 1000,
} as const;
