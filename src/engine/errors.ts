import type { Range } from './options.js';

/** Every error the engine throws carries a stable `code` that callers can switch on. */
export class StormlabError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/**
 * An option outside its range; the message names the option and the value. `option` is the
 * option's dotted path as the thrower knows it (`breaker.maxOpenMs`, `guard.targets[1].model`)
 * and `problem` the rest of the message, so a caller that names options differently (a
 * scenario file, a CLI flag) can say `${its own name} ${problem}` without parsing the message.
 */
export class OptionError extends StormlabError {
  readonly option: string | undefined;
  readonly problem: string;
  /** The value refused, when one was. */
  readonly value: unknown;
  /** The range a number option must be in, when that is what it missed. */
  readonly range: Range | undefined;
  constructor(message: string, option?: string, detail: { value?: unknown; range?: Range } = {}) {
    super('ERR_STORMLAB_OPTION', message);
    this.option = option;
    this.value = detail.value;
    this.range = detail.range;
    this.problem =
      option !== undefined && message.startsWith(`${option} `) ? message.slice(option.length + 1) : message;
  }
}

/** How a stream attempt went wrong; both are retryable and count as failures of their target. */
export type StreamFault = 'stream_cut' | 'stream_stall';

/**
 * A streamed answer that ended without its terminal signal (`stream_cut`: the connection
 * closed or broke mid-stream) or stopped sending events (`stream_stall`: no first token, or
 * an idle gap, within the stream guard's limits). Thrown by an attempt before it commits the
 * stream to the caller (then the guard retries or fails over), or passed to a deferred
 * outcome's `settle` after (then only the target's breaker and throttle learn of it).
 * Classified as the class of the same name.
 */
export class StreamError extends StormlabError {
  readonly kind: StreamFault;
  constructor(kind: StreamFault, message: string, options?: { cause?: unknown }) {
    super(kind === 'stream_cut' ? 'ERR_STORMLAB_STREAM_CUT' : 'ERR_STORMLAB_STREAM_STALL', message, options);
    this.kind = kind;
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
