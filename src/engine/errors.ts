/** Every error the engine throws carries a stable `code` that callers can switch on. */
export class StormlabError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** An option outside its range; the message names the option and the value. */
export class OptionError extends StormlabError {
  constructor(message: string) {
    super('ERR_STORMLAB_OPTION', message);
  }
}

/**
 * Why the engine refused a call locally, before it reached the upstream.
 * - `throttle`: adaptive throttling dropped it (the upstream has been refusing work).
 * - `budget`: the retry budget had no tokens for a retry.
 * - `limit`: a token bucket (requests/s, tokens/min, ...) had no room.
 * - `breaker`: the circuit breaker for its key is open or its half-open probes are taken.
 * - `concurrency`: the concurrency limiter's queue is full.
 * - `queue_timeout`: it waited in the concurrency queue longer than `maxWaitMs`.
 * - `deadline`: too little of its deadline is left to start (or to wait for) an attempt.
 */
export type ShedReason = 'throttle' | 'budget' | 'limit' | 'breaker' | 'concurrency' | 'queue_timeout' | 'deadline';

export const SHED_REASONS: readonly ShedReason[] = [
  'throttle',
  'budget',
  'limit',
  'breaker',
  'concurrency',
  'queue_timeout',
  'deadline',
];

/** A call refused locally. `retryAfterMs` says when trying again could succeed, if known. */
export class ShedError extends StormlabError {
  readonly reason: ShedReason;
  readonly retryAfterMs: number | undefined;
  readonly detail: string | undefined;
  constructor(reason: ShedReason, opts?: { retryAfterMs?: number; detail?: string; cause?: unknown }) {
    const hint =
      opts?.retryAfterMs !== undefined && Number.isFinite(opts.retryAfterMs)
        ? ` (retry after ${Math.ceil(opts.retryAfterMs)} ms)`
        : '';
    super('ERR_STORMLAB_SHED', `shed locally: ${reason}${opts?.detail ? ` (${opts.detail})` : ''}${hint}`, {
      cause: opts?.cause,
    });
    this.reason = reason;
    this.retryAfterMs = opts?.retryAfterMs;
    this.detail = opts?.detail;
  }
}
