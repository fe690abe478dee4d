import { OptionError } from '../engine/errors.js';

/** A Responses answer kept for `previous_response_id`, `GET` and `DELETE /v1/responses/{id}`. */
export interface StoredResponse {
  /** The response object as it was last sent (the JSON answer, or a stream's `response.completed`). */
  response: Record<string, unknown>;
  /** The conversation it answered: the stored conversation it continued, that one's output, then its own input. */
  input: readonly unknown[];
  /** Its output items (what a continuation adds after `input`). */
  output: readonly unknown[];
  /** About how many characters `input` and `output` hold, for the conversation's limit. */
  chars: number;
}

/** How many responses are kept, and the range `storedResponses` / `--stored-responses` takes. */
export const STORED_RESPONSES = { default: 1000, min: 1, max: 1_000_000 } as const;

/**
 * The stored responses, least recently used first out: at most `capacity` are kept; storing one
 * more forgets the one used longest ago (a continuation or `GET` counts as a use). A forgotten
 * id answers as one never given out.
 */
export class ResponseStore {
  private readonly entries = new Map<string, StoredResponse>();

  constructor(readonly capacity: number = STORED_RESPONSES.default) {
    const { min, max } = STORED_RESPONSES;
    if (!Number.isInteger(capacity) || capacity < min || capacity > max)
      throw new OptionError(
        `storedResponses: expected an integer from ${min} to ${max}, got ${JSON.stringify(capacity)}`,
      );
  }

  get size(): number {
    return this.entries.size;
  }

  /** The stored response `id`, now the most recently used; undefined when never stored, deleted or evicted. */
  get(id: string): StoredResponse | undefined {
    const e = this.entries.get(id);
    if (e === undefined) return undefined;
    this.entries.delete(id);
    this.entries.set(id, e);
    return e;
  }

  set(id: string, e: StoredResponse): void {
    this.entries.delete(id);
    this.entries.set(id, e);
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  delete(id: string): boolean {
    return this.entries.delete(id);
  }

  clear(): void {
    this.entries.clear();
  }
}
