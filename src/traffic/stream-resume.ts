import type { ErrorClass, Classification } from '../engine/classify.js';
import { engineStreamError } from './stream-outcomes.js';

const CUT = engineStreamError('cut');
const STALL = engineStreamError('stall');

/**
 * The simulator's side of `stream.resume`: a streamed engine call whose committed answer broke
 * (a cut, or a stall past the idle limit, after the caller got its first token) is continued on
 * a model that declares `continuation: prefill` — the engine's `GuardCall.resume` picks which —
 * instead of ending with the in-band error. The resumption is priced as the upstream prices it:
 * a request whose prompt carries the tokens delivered so far (the prefill), asking only for the
 * rest of the completion, with a first-token wait of its own. Per call it keeps the completion
 * tokens the caller already has and when the caller got its first token (the call's TTFT, which
 * a resumption does not change).
 */
export class StreamResume {
  /** Completion tokens the caller already has (0: the call is not resuming). */
  private got = new Float64Array(0);
  /** When the caller got its first token, for a resuming call. */
  private first = new Float64Array(0);
  /** Tokens the attempt in flight had streamed when it stalled. */
  private stalled = new Float64Array(0);
  /** Resumptions made for the call. */
  private count = new Int32Array(0);

  /** A new call `id`: nothing delivered yet. */
  open(id: number): void {
    if (id >= this.got.length) this.grow(id);
    this.got[id] = 0;
    this.first[id] = -1;
    this.stalled[id] = 0;
    this.count[id] = 0;
  }

  /** The attempt in flight of call `id` stalled after `tokens` completion tokens. */
  stall(id: number, tokens: number): void {
    this.stalled[id] = tokens;
  }

  /**
   * The committed answer of call `id` broke (`kind`) after `tokens` more completion tokens
   * reached the caller (a stall: those it had when it stalled), its first token at `firstAt`:
   * the class the attempt ends with, retryable, for the engine to resume on a declaring model.
   */
  broke(id: number, kind: 'cut' | 'stall', tokens: number, firstAt: number): Classification {
    this.got[id] += kind === 'cut' ? tokens : this.stalled[id];
    if (this.first[id] < 0) this.first[id] = firstAt;
    this.count[id]++;
    return kind === 'cut' ? CUT : STALL;
  }

  /** The class the engine is told a resumed break had. */
  static classOf(kind: 'cut' | 'stall'): ErrorClass {
    return kind === 'cut' ? 'stream_cut' : 'stream_stall';
  }

  /** Completion tokens call `id`'s caller already has: the next attempt's prefill (0: none). */
  delivered(id: number): number {
    return this.got[id];
  }

  /** The call's first token as its caller saw it: the first attempt's when it was resumed, else `firstAt`. */
  firstToken(id: number, firstAt: number): number {
    return this.first[id] >= 0 ? this.first[id] : firstAt;
  }

  /** Whether call `id` was resumed at least once. */
  resumed(id: number): boolean {
    return this.count[id] > 0;
  }

  private grow(id: number): void {
    const n = Math.max(1024, this.got.length * 2, id + 1);
    const f = (a: Float64Array) => {
      const b = new Float64Array(n);
      b.set(a);
      return b;
    };
    this.got = f(this.got);
    this.first = f(this.first);
    this.stalled = f(this.stalled);
    const c = new Int32Array(n);
    c.set(this.count);
    this.count = c;
  }
}
