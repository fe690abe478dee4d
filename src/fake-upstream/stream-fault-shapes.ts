import type { AnswerInfo, Dialect } from './dialect.js';

/**
 * How a provider's stream looks when a stream fault hits it, beside the `Dialect` (which
 * renders the healthy answers): a stream or answer stopped by the content filter, a stream
 * that finishes without its last event, an event that is not JSON. Built from the dialect's
 * own healthy shapes, so the two never drift apart.
 */
export interface StreamFaultShapes {
  /** SSE ending a stream the content filter stopped: OpenAI `finish_reason: content_filter`, Anthropic `stop_reason: refusal`. */
  filteredClose(a: AnswerInfo, completionTokens: number): string;
  /** The JSON answer the content filter stopped. */
  filteredCompletion(a: AnswerInfo, text: string, completionTokens: number): object;
  /** SSE ending a stream with its finish but not its last event: no `[DONE]`, no `message_stop`. */
  closeWithoutDone(a: AnswerInfo, completionTokens: number): string;
  /** One event whose data is not valid JSON (cut off inside a string). */
  malformedEvent(a: AnswerInfo): string;
}

function openai(d: Dialect): StreamFaultShapes {
  return {
    filteredClose: (a, n) =>
      d.streamClose(a, n).replace(/"finish_reason":"(?:stop|length)"/, '"finish_reason":"content_filter"'),
    filteredCompletion: (a, text, n) => {
      const body = d.completion(a, text, n) as { choices: Array<{ finish_reason: string }> };
      body.choices[0].finish_reason = 'content_filter';
      return body;
    },
    closeWithoutDone: (a, n) => d.streamClose(a, n).replace(/data: \[DONE\]\n\n$/, ''),
    malformedEvent: (a) =>
      `data: {"id":"${a.id}","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"the sto\n\n`,
  };
}

function anthropic(d: Dialect): StreamFaultShapes {
  return {
    filteredClose: (a, n) =>
      d.streamClose(a, n).replace(/"stop_reason":"(?:end_turn|max_tokens)"/, '"stop_reason":"refusal"'),
    filteredCompletion: (a, text, n) => ({ ...d.completion(a, text, n), stop_reason: 'refusal' }),
    closeWithoutDone: (a, n) => d.streamClose(a, n).replace(/event: message_stop\n[^\n]*\n\n$/, ''),
    malformedEvent: () =>
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"the sto\n\n',
  };
}

const cache = new WeakMap<Dialect, StreamFaultShapes | null>();

/** The shapes for `dialect`, or null for a dialect that has none (its faults render generically). */
export function streamFaultShapes(dialect: Dialect): StreamFaultShapes | null {
  let s = cache.get(dialect);
  if (s === undefined) {
    s = dialect.name === 'openai' ? openai(dialect) : dialect.name === 'anthropic' ? anthropic(dialect) : null;
    cache.set(dialect, s);
  }
  return s;
}
