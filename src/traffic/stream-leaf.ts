import { classify, type Classification } from '../engine/classify.js';
import { StreamLimit, streamLimitError, StreamWatch } from '../engine/stream-watch.js';
import { Detail, StreamEvent } from '../upstream/response.js';
import type { CallTable } from './call-table.js';
import type { EngineConfig, LayerConfig } from './config.js';
import { brokenAfterCommit, classifyStreamed, engineStreamError, isTruncated } from './stream-outcomes.js';
import { resolveEngine } from './engine-guard.js';

/** Timer kinds of the stream guard (the interpreter's K_RETRY is 1, K_TIMEOUT 2). */
export const K_FIRST_TOKEN = 3;
export const K_IDLE = 4;

const STALL = engineStreamError('stall');
const CUT_AFTER_COMMIT = brokenAfterCommit('cut');
const STALL_AFTER_COMMIT = brokenAfterCommit('stall');

/**
 * A leaf layer whose LLM calls are streamed: how its callers read the stream. Every caller
 * records the first token (TTFT); an engine layer also guards the stream — no first token
 * within `firstTokenMs`, or no event for `idleMs`, abandons the attempt — and never takes a
 * cut stream for an answer, where a plain caller (none, naive, sdk) does.
 *
 * The idle gap is watched in one of two ways, after the transport. The simulated upstream
 * announces a stall when it starts (`StreamEvent.Stall` with its length), so a stall longer
 * than `idleMs` is given one timer then. A transport that reads a stream as it comes (HTTP)
 * cannot know a stall ahead: it keeps when the stream last brought something
 * (`LeafTransport.lastEventAt`), and one timer armed at the first token checks it when due —
 * re-armed for the rest of the gap while the stream moves, the attempt abandoned once it has
 * been quiet for `idleMs` (`idleDue`). Either way no timer per event.
 *
 * Which limit runs out when, and how it is classified, is the engine's `StreamWatch` — the
 * machine `guardedFetch` and the undici interceptor run — asked once per layer, since the
 * simulated upstream sends a stream's headers with its first token: the first limit to run out
 * with nothing in (the header wait or the first-token wait, whichever is shorter) ends the
 * attempt with that limit's error, and the idle gap counts only after the first token. The
 * commit policy is the engine's too: with `first-token`, a stream cut or stalled after its
 * first token reached the caller, whose answer ends with an error — not retried (the HTTP
 * integrations' in-band error); with `complete` every break is retried.
 */
export class StreamLeaf {
  readonly engine: boolean;
  /** Infinity when the layer does not guard the first token. */
  readonly firstTokenMs: number;
  private readonly idleMs: number;
  /** The class of the limit that ends an attempt with no first token by `firstTokenMs`. */
  private readonly firstLimit: Classification;
  /** The caller gets the stream at its first token (`commit: 'first-token'`). */
  private readonly early: boolean;

  /** `polled`: the transport does not announce stalls; the idle watch asks it when the stream last moved. */
  constructor(
    cfg: LayerConfig,
    base: EngineConfig,
    private readonly polled = false,
  ) {
    this.engine = cfg.retry.policy === 'engine';
    const limits = resolveEngine(base, cfg.retry.policy === 'engine' ? cfg.retry.engine : {}).stream;
    // Nothing in (the headers come with the first token): the first limit to run out, and which.
    const waits = { headersMs: limits.headersMs, firstTokenMs: limits.firstTokenMs, idleMs: limits.idleMs };
    const before = new StreamWatch(waits, 0);
    const first = before.due();
    const limit = first === Infinity ? StreamLimit.FirstToken : before.check(first);
    this.firstLimit = classify({ error: streamLimitError(limit, waits), cancelled: false });
    // The first token in at 0: when the idle limit runs out with nothing more.
    const after = new StreamWatch(waits, 0);
    after.headers();
    after.content(0);
    this.firstTokenMs = this.engine ? first : Infinity;
    this.idleMs = this.engine ? after.due() : Infinity;
    this.early = limits.commit === 'first-token';
  }

  /**
   * A stream event of call `id`'s attempt: records the first token; returns the delay after
   * which the idle timer must fire (a stall longer than `idleMs`; polled, the first check), or -1.
   */
  onEvent(event: number, ms: number, c: CallTable, id: number, now: number): number {
    if (event === StreamEvent.FirstToken) {
      c.firstAt[id] = now;
      return this.polled && this.idleMs !== Infinity ? this.idleMs : -1;
    }
    return ms > this.idleMs ? this.idleMs : -1;
  }

  /**
   * Polled: the idle timer fired at `now` and the stream last moved at `lastAt`. When the
   * watch is due again (later than `now`: the stream moved since it was armed), or -1 when
   * the stream has been quiet for `idleMs` and the attempt is abandoned.
   */
  idleDue(lastAt: number, now: number): number {
    const due = lastAt + this.idleMs;
    return due > now ? due : -1;
  }

  /** A guard timer fired: the class the attempt ends with, undefined if there is nothing to abandon. */
  abandon(kind: number, firstAt: number): Classification | undefined {
    if (kind === K_FIRST_TOKEN) return firstAt < 0 ? this.firstLimit : undefined;
    return this.early && firstAt >= 0 ? STALL_AFTER_COMMIT : STALL;
  }

  /**
   * A 200 to call `id`'s attempt as this layer's callers read the stream (undefined: the usual
   * classification); marks a truncated success and, for an answer whose first token came with
   * its end (a filter after 0 tokens), the first token.
   */
  classify(status: number, detail: number, c: CallTable, id: number, now: number): Classification | undefined {
    if (status !== 200) return undefined;
    // A cut after the first token: with commit first-token the caller had the stream already.
    const committed = this.engine && this.early && c.firstAt[id] >= 0;
    if (c.firstAt[id] < 0) c.firstAt[id] = now;
    if (isTruncated(detail, this.engine)) c.truncated[id] = 1;
    if (committed && detail === Detail.Cut) return CUT_AFTER_COMMIT;
    return classifyStreamed(detail, this.engine);
  }
}
