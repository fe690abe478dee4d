import type { CommitPolicy } from '../engine/engine-profiles.js';
import { refusalOf } from '../engine/refusal.js';
import type { SseUsage } from './response-usage.js';
import { SseSplitter, sseFields } from './sse-splitter.js';
import { PlainDeltas } from './plain-deltas.js';
import { errorEvent, EventFlag, readStreamEvent, type StreamProvider } from './stream-event.js';

// When the caller gets a stream: defined beside the engine profiles that give its default.
export { COMMIT_POLICIES, type CommitPolicy } from '../engine/engine-profiles.js';

/** How a stream stands after a chunk or at its end. */
export type GateState =
  /** Still going. */
  | 'open'
  /** Its terminal signal came: complete, nothing more to read. */
  | 'done'
  /** The provider sent an error event. */
  | 'error';

/**
 * The stream guard's bookkeeping for one streamed answer, independent of the transport: it
 * splits the bytes into events, reads each (content, finish, terminal, error, malformed),
 * decides when the caller gets the stream (the commit policy) and which bytes it gets —
 * whole events only, malformed ones left out, nothing after the terminal signal.
 */
export class StreamGate {
  private readonly splitter = new SseSplitter();
  private readonly plain = new PlainDeltas();
  private held: Uint8Array[] = [];
  private state: GateState = 'open';
  committed = false;
  /** A content token has been seen. */
  content = false;
  /** The answer said it was finished (the end marker may still be missing). */
  finished = false;
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
    private readonly commit: CommitPolicy,
    provider: StreamProvider,
    private readonly usage: SseUsage | undefined,
  ) {
    this.provider = provider;
  }

  get status(): GateState {
    return this.state;
  }

  /**
   * Reads one chunk. Returns the bytes the caller gets now (nothing before commit; after it,
   * the chunk's whole, well-formed events).
   */
  push(chunk: Uint8Array): Uint8Array[] {
    if (this.state !== 'open') return [];
    let skips: number[] | undefined;
    let stopAt = -1;
    const { buf, end } = this.splitter.push(chunk, (b, text, start, stop) => {
      if (stopAt >= 0) return;
      // After the first token a plain delta needs no parse (see PlainDeltas).
      if (this.content && this.plain.test(b, text, start, stop, this.provider)) return;
      const info = readStreamEvent(sseFields(b, text, start, stop));
      const f = info.flags;
      if (f === 0 && info.json === undefined) return;
      if (info.provider !== undefined) this.provider = info.provider;
      if (f & EventFlag.Malformed) {
        this.malformed++;
        (skips ??= []).push(start, stop);
        return;
      }
      if (info.json !== undefined) this.usage?.observe(info.json);
      if (f & EventFlag.Content) {
        this.content = true;
        if (f === EventFlag.Content) this.plain.learn(text, start, stop, info);
      }
      if (f & EventFlag.Finish) {
        this.finished = true;
        if (info.json !== undefined && isRefusal(info.json)) this.refusal = info.json;
      }
      if (f & EventFlag.Error) {
        this.upstreamError = info.json;
        this.state = 'error';
        stopAt = stop;
      } else if (f & EventFlag.Terminal) {
        this.state = 'done';
        stopAt = stop;
      }
    });
    this.malformed += this.splitter.dropped;
    this.splitter.dropped = 0;
    const upTo = stopAt >= 0 ? stopAt : end;
    const parts = skips === undefined ? (upTo > 0 ? [buf.subarray(0, upTo)] : []) : without(buf, upTo, skips);
    if (!this.committed) {
      for (const p of parts) this.held.push(p);
      if (!this.ready()) return [];
      this.committed = true;
      const out = this.held;
      this.held = [];
      return out;
    }
    return parts;
  }

  /**
   * The upstream closed the stream cleanly. Complete when its end marker or a finish came
   * (a missing `[DONE]` after `finish_reason` is not a cut); otherwise it is a cut. Returns the
   * held bytes the caller still gets for a complete stream (none for a refusal before commit:
   * `committed` stays false, the bytes stay held).
   */
  close(): { complete: boolean; out: Uint8Array[] } {
    if (this.state === 'error') return { complete: false, out: [] };
    const complete = this.state === 'done' || this.finished;
    if (complete) this.state = 'done';
    if (!complete || !this.ready()) return { complete, out: [] };
    this.committed = true;
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

  /**
   * Whether the caller gets the stream now. A refusal that is whole before commit is not
   * handed over: it is the attempt's answer, which the guard returns or fails over.
   */
  private ready(): boolean {
    if (this.state === 'done') return this.refusal === undefined;
    if (this.state === 'error') return false;
    return this.commit === 'first-token' && this.content;
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
