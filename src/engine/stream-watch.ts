import { StormlabError, StreamError } from './errors.js';

/** A stream guard's three waits, in ms (Infinity: none). */
export interface StreamWaits {
  /** From the attempt's start to the response headers. */
  headersMs: number;
  /** From the attempt's start to the first delta the caller would receive. */
  firstTokenMs: number;
  /** The longest quiet, once the first delta is in, while the guard waits on the upstream. */
  idleMs: number;
}

/** What a `StreamWatch` says at a time: nothing yet, or which limit ran out. */
export const StreamLimit = {
  None: 0,
  /** No headers within `headersMs`. */
  Headers: 1,
  /** No content delta within `firstTokenMs` of the start. */
  FirstToken: 2,
  /** Quiet for `idleMs` after the first delta. */
  Idle: 3,
  /** Quiet after the answer's finish: its end marker is missing; the answer is whole. */
  FinishQuiet: 4,
} as const;

/** A stream that sends a finish but no end marker is finalised after this much quiet (or `idleMs`, if shorter). */
export const FINISH_GRACE_MS = 1000;

/**
 * The timing of one streamed attempt, as one pure state machine that every path runs — the
 * simulator's stream leaves, `guardedFetch` and the undici interceptor — so each limit fires at
 * its own time everywhere. Inputs are what happened and when (`headers`, `activity`, `content`,
 * `finish`, `waiting`); `due()` says when the next limit runs out, `check(now)` which one has.
 * It holds no timer and reads no clock: the caller arms one timer at `due()` and asks `check`
 * when it fires.
 *
 * - The header wait runs from the start until the headers.
 * - The first-token limit runs from the start until the first delta the caller would receive
 *   (text, tool-call arguments, reasoning — not a role chunk, a ping or a keep-alive), whether
 *   or not the headers are in.
 * - The idle limit runs only after that first delta (before it, the first-token limit is the
 *   one that holds), and only while the guard is waiting on the upstream: a caller that holds
 *   the stream back is not a stalled upstream. Quiet counts from the last bytes or from when
 *   the guard started waiting again, whichever is later.
 * - After the answer's finish the quiet allowed is `FINISH_GRACE_MS` (or `idleMs` if shorter),
 *   and running out of it completes the stream instead of failing it.
 */
export class StreamWatch {
  private headersIn = false;
  private contentIn = false;
  private finished = false;
  private pending = true;
  private quietFrom: number;

  constructor(
    private readonly waits: StreamWaits,
    private readonly start: number,
  ) {
    this.quietFrom = start;
  }

  /** The response headers came. */
  headers(): void {
    this.headersIn = true;
  }

  /** Bytes came from the upstream. */
  activity(now: number): void {
    this.quietFrom = now;
  }

  /** The first delta the caller would receive came (any later call is a no-op). */
  content(now: number): void {
    if (this.contentIn) return;
    this.contentIn = true;
    this.quietFrom = now;
  }

  /** The answer said it is finished (its end marker may still come). */
  finish(): void {
    this.finished = true;
  }

  /** Whether the guard is waiting on the upstream now (false: the caller holds the stream back). */
  waiting(pending: boolean, now: number): void {
    if (pending && !this.pending) this.quietFrom = now;
    this.pending = pending;
  }

  get hasContent(): boolean {
    return this.contentIn;
  }

  /** When the next limit runs out (Infinity: none is running). */
  due(): number {
    let at = Infinity;
    if (!this.headersIn) at = this.start + this.waits.headersMs;
    if (!this.contentIn) return Math.min(at, this.start + this.waits.firstTokenMs);
    if (!this.pending) return at;
    return Math.min(at, this.quietFrom + this.quietMs());
  }

  /** The limit that has run out at `now` (the earliest, the header wait first on a tie), or `None`. */
  check(now: number): number {
    const headersAt = this.headersIn ? Infinity : this.start + this.waits.headersMs;
    const firstAt = this.contentIn ? Infinity : this.start + this.waits.firstTokenMs;
    const idleAt = this.contentIn && this.pending ? this.quietFrom + this.quietMs() : Infinity;
    const at = Math.min(headersAt, firstAt, idleAt);
    if (at > now) return StreamLimit.None;
    if (at === headersAt) return StreamLimit.Headers;
    if (at === firstAt) return StreamLimit.FirstToken;
    return this.finished ? StreamLimit.FinishQuiet : StreamLimit.Idle;
  }

  private quietMs(): number {
    return this.finished ? Math.min(FINISH_GRACE_MS, this.waits.idleMs) : this.waits.idleMs;
  }
}

/** No response headers within the header wait: a `timeout`, which falls over to the next target. */
export class HeadersTimeoutError extends StormlabError {
  constructor(ms: number) {
    super('ERR_STORMLAB_HEADERS_TIMEOUT', `no response headers within ${Math.round(ms)} ms`);
    // The name the classifier reads as a timeout (as for AbortSignal.timeout()).
    this.name = 'TimeoutError';
  }
}

/** The error an attempt ends with when `limit` (not `None` or `FinishQuiet`) ran out: one wording on every path. */
export function streamLimitError(limit: number, waits: StreamWaits): Error {
  if (limit === StreamLimit.Headers) return new HeadersTimeoutError(waits.headersMs);
  if (limit === StreamLimit.FirstToken)
    return new StreamError('stream_stall', `no content token within ${Math.round(waits.firstTokenMs)} ms`);
  return new StreamError('stream_stall', `no event for ${Math.round(waits.idleMs)} ms`);
}
