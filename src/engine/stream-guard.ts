import type { CommitPolicy } from './engine-profiles.js';
import { StreamError } from './errors.js';
import { StreamLimit, StreamWatch, streamLimitError, type StreamWaits } from './stream-watch.js';

/**
 * What one parsed event of a stream says (bit flags). The integrations' parser
 * (`readStreamEvent`) sets the first five from the event's structure; the stream gate adds
 * `Refusal` when a finish is the model refusing.
 */
export const EventFlag = {
  /** A content delta the caller would receive: text, a tool call's arguments, a refusal, reasoning. */
  Content: 1,
  /** The answer says it is finished (`finish_reason`, `stop_reason`, a usage chunk); the end may follow. */
  Finish: 2,
  /** The stream's own end marker (`[DONE]`, `message_stop`, `response.completed`): nothing follows. */
  Terminal: 4,
  /** The provider reports an error in the stream. */
  Error: 8,
  /** Not an event any client can read (bad JSON, not an object): skipped, never forwarded. */
  Malformed: 16,
  /** The finish is the model refusing (`finish_reason: content_filter`, `stop_reason: refusal`). */
  Refusal: 32,
} as const;

/**
 * What the stream guard decides after each input. The caller (a transport) only carries it out:
 *
 * - `Hold`: nothing for the caller yet (or nothing new); keep reading. Before commit the
 *   event's bytes are held, after it they are delivered (`Deliver`).
 * - `Commit`: the caller gets the stream now: what was held, then what just came.
 * - `Deliver`: pass this event on (the stream is the caller's already).
 * - `Complete`: the answer is whole: hand over what is left and end the caller's stream cleanly.
 * - `Refused`: the model refused, whole, before commit: the held stream is the attempt's
 *   answer, classified `content_filter`, which the engine returns or fails over.
 * - `Retry`: before commit, abandon the attempt: the caller saw nothing, and the engine retries
 *   it (a cut; a provider error event, classified by its body, may also fail over).
 * - `FailOver`: before commit, abandon the attempt on a limit (header wait, first token, idle
 *   gap): a timeout class, which the engine moves to the next target at once when there is one
 *   (`onTimeout: 'fallback'`, the default; `'retry'` retries it on the same target).
 * - `EndWithError`: after commit, the stream broke: the caller's stream ends with an in-band
 *   error event in the provider's shape (or the provider's own, already delivered) — never a
 *   clean end. Not retried (the caller has the bytes), but counted against the upstream.
 * - `Resume`: after commit, on a cut or a stall, where the attempt may be continued
 *   (`StreamGuardSetup.resume`: the target declares continuation and the caller asked for it):
 *   ask for the rest of the answer instead of ending with an error.
 *
 * `Retry`, `FailOver`, `EndWithError` and `Resume` are final and come with `error` (why).
 */
export const StreamDecision = {
  Hold: 0,
  Commit: 1,
  Deliver: 2,
  Complete: 3,
  Refused: 4,
  Retry: 5,
  FailOver: 6,
  EndWithError: 7,
  Resume: 8,
} as const;

/** The names of `StreamDecision`s, by value (for tests and logs). */
export const STREAM_DECISION_NAMES: readonly string[] = Object.keys(StreamDecision);

/** What one streamed attempt is guarded with. */
export interface StreamGuardSetup {
  waits: StreamWaits;
  commit: CommitPolicy;
  /**
   * Whether a cut or a stall after commit is continued (`Resume`) rather than ended with an
   * error: the attempt's target declares it accepts a continuation and the caller asked for one.
   * @default false
   */
  resume?: boolean;
}

const OPEN = 0;
const COMMITTED = 1;
const OVER = 2;

/**
 * The stream guard: one state machine for one streamed attempt, commit policy included, run by
 * every path — the simulator's stream leaves, `guardedFetch` and the undici interceptor — so
 * that each limit fires at its own time and each fault gets the same verdict everywhere. It
 * reads no clock and holds no timer (every input carries its `now`; `due()` says when to come
 * back with `timer(now)`), and it never sees bytes: the transport splits and parses the events
 * (`StreamGate`) and tells it what each one said.
 *
 * Inputs: `headers`, `bytes` (anything came), `event` (a parsed event's `EventFlag`s),
 * `endOfChunk` (every event of one read told: the commit is decided per read), `waiting`
 * (whether the transport waits on the upstream: a caller holding the stream back is no stall),
 * `close` (a clean end of the body), `broke` (the transport failed), `timer`. Each returns a
 * `StreamDecision`. The timing is the engine's `StreamWatch`: the header wait from the start
 * until the headers, the first-token limit from the start until the first content delta, the
 * idle gap only after it.
 */
export class StreamGuard {
  private readonly watch: StreamWatch;
  private phase = OPEN;
  private refused = false;
  private wasCommitted = false;
  private isFinished = false;
  /** Why the attempt was abandoned or the stream broke (set with a final decision). */
  error: Error | undefined = undefined;
  /** The final decision once there is one (`Hold` until then). */
  outcome: number = StreamDecision.Hold;
  /** The provider's own error event ended the stream. */
  upstreamError = false;

  constructor(
    private readonly setup: StreamGuardSetup,
    start: number,
  ) {
    this.watch = new StreamWatch(setup.waits, start);
  }

  get waits(): StreamWaits {
    return this.setup.waits;
  }

  /** The caller has the stream. */
  get committed(): boolean {
    return this.phase === COMMITTED || (this.phase === OVER && this.wasCommitted);
  }

  /** A content delta came. */
  get content(): boolean {
    return this.watch.hasContent;
  }

  /** The answer said it is finished (its end marker may still come). */
  get finished(): boolean {
    return this.isFinished;
  }

  /** A final decision was made: nothing more is read. */
  get over(): boolean {
    return this.phase === OVER;
  }

  /** The finish was the model refusing. */
  get refusal(): boolean {
    return this.refused;
  }

  headers(): void {
    this.watch.headers();
  }

  /** Bytes came from the upstream (whole events or not). */
  bytes(now: number): void {
    this.watch.activity(now);
  }

  /** Whether the transport waits on the upstream now (false: the caller holds the stream back). */
  waiting(pending: boolean, now: number): void {
    this.watch.waiting(pending, now);
  }

  /** One parsed event, by its `EventFlag`s. */
  event(flags: number, now: number): number {
    if (this.phase === OVER) return StreamDecision.Hold;
    if (flags & EventFlag.Malformed) return StreamDecision.Hold;
    if (flags & EventFlag.Content) this.watch.content(now);
    if (flags & EventFlag.Finish) {
      this.isFinished = true;
      this.watch.finish();
      if (flags & EventFlag.Refusal) this.refused = true;
    }
    if (flags & EventFlag.Error) {
      this.upstreamError = true;
      const error = new Error('the provider sent an error event');
      return this.phase === COMMITTED
        ? this.end(StreamDecision.EndWithError, error)
        : this.end(StreamDecision.Retry, error);
    }
    if (flags & EventFlag.Terminal) return this.whole();
    return this.phase === COMMITTED ? StreamDecision.Deliver : StreamDecision.Hold;
  }

  /**
   * The transport told every whole event of what came at once (one read, one chunk): the
   * caller gets what came as a unit, so the commit is decided here — `Commit` when the stream
   * is the caller's from now on (`first-token`: a content delta came), `Deliver` when it was
   * already, `Hold` otherwise (or when the stream is over). A stream that came whole in one
   * chunk, a refusal included, is decided by its end (`Complete`, `Refused`), never committed.
   */
  endOfChunk(): number {
    if (this.phase === COMMITTED) return StreamDecision.Deliver;
    if (this.phase === OPEN && this.setup.commit === 'first-token' && this.watch.hasContent) {
      this.phase = COMMITTED;
      return StreamDecision.Commit;
    }
    return StreamDecision.Hold;
  }

  /**
   * The body ended cleanly. Complete when its end marker or a finish came (a missing `[DONE]`
   * after `finish_reason` is not a cut); otherwise a cut.
   */
  close(): number {
    if (this.phase === OVER) return this.outcome;
    if (this.isFinished) return this.whole();
    return this.broken(new StreamError('stream_cut', 'stream closed before its terminal signal'), false);
  }

  /**
   * The transport failed mid-body: `error` is why, as the attempt reports it (a `stream_cut`
   * with the transport's error as its cause, or the attempt's deadline).
   */
  broke(error: Error): number {
    if (this.phase === OVER) return this.outcome;
    return this.broken(error, false);
  }

  /** When the transport must call `timer` (Infinity: no limit is running). */
  due(): number {
    return this.phase === OVER ? Infinity : this.watch.due();
  }

  /** A timer fired at `now`: `Hold` if no limit ran out yet (ask `due()` again). */
  timer(now: number): number {
    if (this.phase === OVER) return StreamDecision.Hold;
    const limit = this.watch.check(now);
    if (limit === StreamLimit.None) return StreamDecision.Hold;
    // Quiet after the answer's finish: its end marker is missing; the answer is whole.
    if (limit === StreamLimit.FinishQuiet) return this.whole();
    return this.broken(streamLimitError(limit, this.setup.waits), true);
  }

  /** The stream is whole: complete, or refused when it was a refusal the caller never got. */
  private whole(): number {
    if (this.phase === OPEN && this.refused) return this.end(StreamDecision.Refused, undefined);
    return this.end(StreamDecision.Complete, undefined);
  }

  private broken(error: Error, limit: boolean): number {
    if (this.phase === COMMITTED)
      return this.end(this.setup.resume === true ? StreamDecision.Resume : StreamDecision.EndWithError, error);
    return this.end(limit ? StreamDecision.FailOver : StreamDecision.Retry, error);
  }

  private end(decision: number, error: Error | undefined): number {
    this.wasCommitted = this.phase === COMMITTED || decision === StreamDecision.Complete;
    this.phase = OVER;
    this.outcome = decision;
    this.error = error;
    return decision;
  }
}
