import type { TripCause } from './circuit-breaker.js';
import type { ErrorClass } from './classify.js';
import type { ShedReason } from './errors.js';

/**
 * What a guard tells its listener. The engine never formats output: the Prometheus adapter,
 * the dashboard and the harness's counters all subscribe to these.
 */
export type GuardEvent =
  /** Refused locally, before reaching the upstream. */
  | { type: 'shed'; at: number; target: string; reason: ShedReason; retryAfterMs?: number; retry: boolean }
  /** An attempt goes out to `target`; `attempt` is 1 for the first try on that target. */
  | { type: 'attempt'; at: number; target: string; attempt: number }
  /** An attempt failed and another will follow after `delayMs`. */
  | { type: 'retry'; at: number; target: string; attempt: number; delayMs: number; class: ErrorClass }
  /** The call moves to the next target of the fallback chain. */
  | {
      type: 'fallback';
      at: number;
      from: string;
      to: string;
      why: ErrorClass | 'breaker_open' | 'throttled' | 'budget' | 'attempts_exhausted' | 'no_continuation';
    }
  /**
   * A committed answer that broke on `target` (`class`: a cut or a stall) is to be continued:
   * the next attempts go only to targets that declare continuation (`stream.resume`).
   */
  | { type: 'resume'; at: number; target: string; class: ErrorClass }
  /** A circuit breaker opened. */
  | { type: 'trip'; at: number; target: string; cause: TripCause; openMs: number }
  /** A circuit breaker went half-open (probing) or closed again. */
  | { type: 'recover'; at: number; target: string; state: 'half_open' | 'closed' }
  /** Tokens reserved from the limiter before an attempt. */
  | { type: 'reserve'; at: number; target: string; tokens: number }
  /** A reservation settled against the tokens the upstream reported. */
  | { type: 'reconcile'; at: number; target: string; reserved: number; actual: number }
  /** A deferred attempt (a stream committed early) reported its final outcome. */
  | { type: 'settle'; at: number; target: string; class: ErrorClass }
  /** A malformed stream event was skipped (counted, not a failure). */
  | { type: 'stream_malformed'; at: number; target: string };

export type GuardEventType = GuardEvent['type'];
export type GuardListener = (event: GuardEvent) => void;
