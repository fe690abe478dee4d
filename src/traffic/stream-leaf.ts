import type { Classification } from '../engine/classify.js';
import { Detail, StreamEvent } from '../upstream/response.js';
import type { CallTable } from './call-table.js';
import type { EngineConfig, LayerConfig } from './config.js';
import { classifyStreamed, isTruncated } from './stream-outcomes.js';
import { resolveEngine, targetStream } from './engine-guard.js';
import { streamVerdicts, type StreamVerdicts } from './stream-verdicts.js';

/** Timer kinds of the stream guard (the interpreter's K_RETRY is 1, K_TIMEOUT 2). */
export const K_FIRST_TOKEN = 3;
export const K_IDLE = 4;

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
 * Which limit runs out when, and what the attempt's verdict is, is the engine's `StreamGuard`
 * — the state machine `guardedFetch` and the undici interceptor run — asked once per layer for
 * each way a simulated stream can end (`streamVerdicts`), since the simulated upstream sends a
 * stream's headers with its first token and streams nothing else the guard reads. So the
 * first limit to run out with nothing in (the header wait or the first-token wait, whichever is
 * shorter) ends the attempt with that limit's error, the idle gap counts only after the first
 * token, and the commit policy is the guard's: with `first-token`, a stream cut or stalled after
 * its first token reached the caller, whose answer ends with an error — not retried (the HTTP
 * integrations' in-band error); with `complete` every break is retried.
 */
export class StreamLeaf {
  readonly engine: boolean;
  /** Per model target (the layer's `models`, in order): the guard's verdicts with its limits. */
  private readonly verdicts: StreamVerdicts[];

  /** `polled`: the transport does not announce stalls; the idle watch asks it when the stream last moved. */
  constructor(
    cfg: LayerConfig,
    base: EngineConfig,
    private readonly polled = false,
  ) {
    this.engine = cfg.retry.policy === 'engine';
    const e = resolveEngine(base, cfg.retry.policy === 'engine' ? cfg.retry.engine : {});
    const models = cfg.models === undefined || cfg.models.length === 0 ? [undefined] : cfg.models;
    // A model target's own limits (`engine.targets`) over the engine's, as `TargetSpec.stream` over the guard's.
    this.verdicts = models.map((m) => streamVerdicts(targetStream(e, m)));
  }

  /** When, from its start, an attempt to target `t` with nothing in is abandoned (Infinity: never; not an engine layer). */
  firstTokenMs(t: number): number {
    return this.engine ? this.of(t).firstAt : Infinity;
  }

  private idleMs(t: number): number {
    return this.engine ? this.of(t).idleAfter : Infinity;
  }

  private of(t: number): StreamVerdicts {
    return this.verdicts[t] ?? this.verdicts[0];
  }

  /**
   * A stream event of call `id`'s attempt: records the first token; returns the delay after
   * which the idle timer must fire (a stall longer than `idleMs`; polled, the first check), or -1.
   */
  onEvent(event: number, ms: number, c: CallTable, id: number, now: number): number {
    const idle = this.idleMs(c.target[id]);
    if (event === StreamEvent.FirstToken) {
      c.firstAt[id] = now;
      return this.polled && idle !== Infinity ? idle : -1;
    }
    return ms > idle ? idle : -1;
  }

  /**
   * Polled: the idle timer of an attempt to target `t` fired at `now` and the stream last moved at `lastAt`. When the
   * watch is due again (later than `now`: the stream moved since it was armed), or -1 when
   * the stream has been quiet for `idleMs` and the attempt is abandoned.
   */
  idleDue(lastAt: number, t: number, now: number): number {
    const due = lastAt + this.idleMs(t);
    return due > now ? due : -1;
  }

  /** A guard timer of an attempt to target `t` fired: the class the attempt ends with, undefined if there is nothing to abandon. */
  abandon(kind: number, firstAt: number, t: number): Classification | undefined {
    const v = this.of(t);
    if (kind === K_FIRST_TOKEN) return firstAt < 0 ? v.nothing : undefined;
    return firstAt >= 0 ? v.stallAfterFirst : v.stallBeforeFirst;
  }

  /**
   * A 200 to call `id`'s attempt as this layer's callers read the stream (undefined: the usual
   * classification); marks a truncated success and, for an answer whose first token came with
   * its end (a filter after 0 tokens), the first token.
   */
  classify(status: number, detail: number, c: CallTable, id: number, now: number): Classification | undefined {
    if (status !== 200) return undefined;
    // A cut after the first token: the guard's verdict (with commit first-token the caller had the stream).
    const afterFirst = c.firstAt[id] >= 0;
    if (!afterFirst) c.firstAt[id] = now;
    if (isTruncated(detail, this.engine)) c.truncated[id] = 1;
    if (this.engine && detail === Detail.Cut) {
      const v = this.of(c.target[id]);
      return afterFirst ? v.cutAfterFirst : v.cutBeforeFirst;
    }
    return classifyStreamed(detail, this.engine);
  }
}
