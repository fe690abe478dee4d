import type { ShedReason } from '../engine/errors.js';

/**
 * What the traffic interpreter reports as it runs. Layers and models are indexes; times are
 * ms since the start of the run. The run layer's metrics collector implements it.
 */
export interface TrafficObserver {
  rootOffered(t: number): void;
  /** `partial`: ok, but with a stage below out of budget returning what it had (counted apart from ok). */
  rootDone(intendedStart: number, t: number, ok: boolean, withinDeadline: boolean, partial?: boolean): void;
  /** Logical calls: what the tree would make if every call succeeded first time. */
  logicalCall(layer: number, n: number, t: number): void;
  attempt(layer: number, t: number, isRetry: boolean): void;
  callDone(layer: number, intendedStart: number, t: number, ok: boolean): void;
  shed(layer: number, reason: ShedReason, t: number): void;
  upstreamAttempt(model: number, t: number): void;
  upstreamResponse(model: number, status: number, detail: number, tokens: number, t: number): void;
  /**
   * Tokens spent on attempts whose caller had already given up or failed; `layer` is the
   * layer whose call threw the result away, `model` the model that spent them (−1 if unknown).
   */
  wasted(tokens: number, t: number, model: number, layer: number): void;
  /** A streamed call at `layer` succeeded; its first token came `ttftMs` after the call started (retries included). */
  streamDone?(layer: number, ttftMs: number, t: number): void;
  /** A call at `layer` succeeded with a cut stream taken as a complete answer (its own, or one below it). */
  truncatedSuccess?(layer: number, t: number): void;
  /** A streamed call at `layer` succeeded with an answer whose committed stream broke and was continued (`stream.resume`). */
  resumedSuccess?(layer: number, t: number): void;
  /** A call at `layer` ran out of its stage's budget (`partial`: it returned what it had instead of failing). */
  outOfBudget?(layer: number, partial: boolean, t: number): void;
}

/** How leaf attempts reach an upstream: the simulated model, or HTTP in live mode. */
export interface LeafTransport {
  modelIndex(name: string): number;
  /** `flags`: `RequestFlag` bits (a streamed request is told its first token and stalls through `onStream`). */
  submit(
    reqId: number,
    model: number,
    promptTokens: number,
    maxOutputTokens: number,
    now: number,
    flags?: number,
  ): void;
  cancel(reqId: number, now: number): void;
  /**
   * A transport that reads streams as they come and so cannot announce a stall (`onStream`
   * tells only the first token): when the stream of request `reqId` last brought an event
   * (its first token or any later chunk), on the scheduler's timeline; -1 if it never did.
   * An engine layer's idle watch asks it instead of waiting for a `StreamEvent.Stall`.
   */
  lastEventAt?(reqId: number): number;
  /**
   * Whether `model` continues a prefilled answer (`continuation: prefill`): the engine resumes a
   * broken committed stream only there. A transport without it never sends a prefill.
   */
  continues?(model: number): boolean;
}
