import { refusalOf } from '../engine/refusal.js';
import { EventFlag, StreamDecision, type StreamGuard } from '../engine/stream-guard.js';
import type { SseUsage } from './response-usage.js';
import { SseSplitter, sseFields } from './sse-splitter.js';
import { PlainDeltas } from './plain-deltas.js';
import { errorEvent, readStreamEvent, type StreamProvider } from './stream-event.js';

// When the caller gets a stream: defined beside the engine profiles that give its default.
export { COMMIT_POLICIES, type CommitPolicy } from '../engine/engine-profiles.js';

/** How a stream stands after a chunk or at its end. */
export type GateState =
  /** Still going. */
  | 'open'
  /** Its terminal signal came (or a finish and a clean close): complete, nothing more to read. */
  | 'done'
  /** The provider sent an error event. */
  | 'error'
  /** The guard gave up on it (a limit ran out, a cut): the transport ends it. */
  | 'over';

/**
 * The bytes side of the stream guard for one streamed answer, independent of the transport: it
 * splits the bytes into events, reads each (content, finish, terminal, error, malformed) by
 * structure, tells the engine's `StreamGuard` — the one state machine that decides when the
 * caller gets the stream (the commit policy) and how it ends — and hands on the bytes the
 * guard's decisions give the caller: whole events only, malformed ones left out, nothing after
 * the terminal signal, nothing before commit.
 */
export class StreamGate {
  private readonly splitter = new SseSplitter();
  private readonly plain = new PlainDeltas();
  private held: Uint8Array[] = [];
  /** Events skipped as malformed. */
  malformed = 0;
  /**
   * The finish event, parsed, when it is the model refusing (`finish_reason: content_filter`,
   * `stop_reason: refusal`): classified as the engine's `content_filter`, as a refusing JSON answer is.
   */
  refusal: Record<string, unknown> | undefined = undefined;
  /** The provider's error event, parsed, if it sent one. */
  upstreamError: Record<string, unknown> | undefined = undefined;
  provider: StreamProvider;

  constructor(
    /** The attempt's state machine (its timer, if any, runs on the same one). */
    readonly guard: StreamGuard,
    provider: StreamProvider,
    private readonly usage: SseUsage | undefined,
    /** The attempt's clock. */
    private readonly now: () => number,
  ) {
    this.provider = provider;
  }

  get committed(): boolean {
    return this.guard.committed;
  }

  /** A content token has been seen. */
  get content(): boolean {
    return this.guard.content;
  }

  /** The answer said it was finished (the end marker may still be missing). */
  get finished(): boolean {
    return this.guard.finished;
  }

  get status(): GateState {
    const g = this.guard;
    if (!g.over) return 'open';
    const d = g.outcome;
    if (d === StreamDecision.Complete || d === StreamDecision.Refused) return 'done';
    return g.upstreamError ? 'error' : 'over';
  }

  /**
   * Reads one chunk. Returns the bytes the caller gets now (nothing before commit; after it,
   * the chunk's whole, well-formed events).
   */
  push(chunk: Uint8Array): Uint8Array[] {
    const g = this.guard;
    if (g.over) return [];
    const now = this.now();
    g.bytes(now);
    let skips: number[] | undefined;
    let stopAt = -1;
    const { buf, end } = this.splitter.push(chunk, (b, text, start, stop) => {
      if (stopAt >= 0) return;
      // After the first token a plain delta needs no parse (see PlainDeltas): it changes nothing.
      if (g.content && this.plain.test(b, text, start, stop, this.provider)) return;
      const info = readStreamEvent(sseFields(b, text, start, stop));
      let f = info.flags;
      if (f === 0 && info.json === undefined) return;
      if (info.provider !== undefined) this.provider = info.provider;
      if (f & EventFlag.Malformed) {
        this.malformed++;
        (skips ??= []).push(start, stop);
        return;
      }
      if (info.json !== undefined) this.usage?.observe(info.json);
      if (f === EventFlag.Content) this.plain.learn(text, start, stop, info);
      if (f & EventFlag.Finish && info.json !== undefined && isRefusal(info.json)) {
        this.refusal = info.json;
        f |= EventFlag.Refusal;
      }
      if (f & EventFlag.Error) this.upstreamError = info.json;
      g.event(f, now);
      // A final decision (its end marker, the provider's error): nothing after this event.
      if (g.over) stopAt = stop;
    });
    this.malformed += this.splitter.dropped;
    this.splitter.dropped = 0;
    const upTo = stopAt >= 0 ? stopAt : end;
    const parts = skips === undefined ? (upTo > 0 ? [buf.subarray(0, upTo)] : []) : without(buf, upTo, skips);
    g.endOfChunk();
    if (!g.committed) {
      for (const p of parts) this.held.push(p);
      return [];
    }
    if (this.held.length === 0) return parts;
    const out = this.held;
    this.held = [];
    for (const p of parts) out.push(p);
    return out;
  }

  /**
   * The upstream closed the stream cleanly. Complete when its end marker or a finish came
   * (a missing `[DONE]` after `finish_reason` is not a cut); otherwise it is a cut. Returns the
   * held bytes the caller still gets for a complete stream (none for a refusal before commit:
   * `committed` stays false, the bytes stay held).
   */
  close(): { complete: boolean; out: Uint8Array[] } {
    const d = this.guard.close();
    const complete = d === StreamDecision.Complete || d === StreamDecision.Refused;
    if (!complete || !this.guard.committed) return { complete, out: [] };
    const out = this.held;
    this.held = [];
    return { complete, out };
  }

  /** Bytes that were held for the caller and never handed over (for a failed, buffered answer). */
  heldBytes(): Uint8Array[] {
    return this.held;
  }

  /** The in-band error event that ends a committed stream that broke. */
  errorEvent(code: string, message: string): Buffer {
    return errorEvent(this.provider, code, message);
  }
}

/** A finish event that is the model refusing (the Responses API's carries the response). */
function isRefusal(json: Record<string, unknown>): boolean {
  return refusalOf(json) !== undefined || (json.response !== undefined && refusalOf(json.response) !== undefined);
}

/** `buf[0..upTo)` without the `[start, stop)` pairs of `skips` (ascending, within `upTo`). */
function without(buf: Buffer, upTo: number, skips: number[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let at = 0;
  for (let i = 0; i < skips.length; i += 2) {
    if (skips[i] >= upTo) break;
    if (skips[i] > at) out.push(buf.subarray(at, skips[i]));
    at = skips[i + 1];
  }
  if (upTo > at) out.push(buf.subarray(at, upTo));
  return out;
}
