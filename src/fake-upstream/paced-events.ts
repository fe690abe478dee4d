import { STREAM_CHUNKS } from './exchange.js';
import { MAX_FILLER_WORDS } from './filler-text.js';

/**
 * The events of a planned stream (tool-call argument pieces, JSON text pieces) spread over the
 * content chunks the exchange paces: it calls `streamDelta` once per chunk, as many times as
 * `chunkCount` says, and `streamClose` (or an error) last. Each call takes its share of the
 * events in order; `rest()` takes what is left.
 */
export class PacedEvents<T> {
  private sent = 0;
  private calls = 0;
  private readonly slots: number;

  constructor(
    private readonly events: readonly T[],
    maxTokens: number,
  ) {
    this.slots = chunkCount(maxTokens);
  }

  next(): T[] {
    this.calls++;
    return this.take(Math.floor((this.calls * this.events.length) / this.slots));
  }

  rest(): T[] {
    return this.take(this.events.length);
  }

  private take(upTo: number): T[] {
    const to = Math.min(upTo, this.events.length);
    const out = this.events.slice(this.sent, to);
    this.sent = Math.max(this.sent, to);
    return out;
  }
}

/** How many content chunks the exchange sends for a completion of `maxTokens`. */
export function chunkCount(maxTokens: number): number {
  return Math.max(1, Math.min(STREAM_CHUNKS, Math.min(maxTokens, MAX_FILLER_WORDS)));
}

/** `text` in about `n` pieces (at least one character each), for deltas. */
export function pieces(text: string, n: number): string[] {
  if (text === '') return [];
  const size = Math.max(1, Math.ceil(text.length / Math.max(1, n)));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}
