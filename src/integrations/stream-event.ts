import { EventFlag } from '../engine/stream-guard.js';
import type { SseEvent } from './sse-splitter.js';

/** The event stream dialects the stream guard reads. */
export type StreamProvider = 'openai' | 'anthropic' | 'responses';

// What one event says, as bit flags: defined beside the state machine that reads them.
export { EventFlag } from '../engine/stream-guard.js';

/** What `readStreamEvent` found: flags, the dialect when the event shows it, the parsed data. */
export interface StreamEventInfo {
  flags: number;
  provider: StreamProvider | undefined;
  json: Record<string, unknown> | undefined;
}

const NOTHING: StreamEventInfo = Object.freeze({ flags: 0, provider: undefined, json: undefined });
const MALFORMED: StreamEventInfo = Object.freeze({ flags: EventFlag.Malformed, provider: undefined, json: undefined });
const DONE: StreamEventInfo = Object.freeze({ flags: EventFlag.Terminal, provider: 'openai', json: undefined });

/**
 * Reads one server-sent event of an OpenAI chat completions, Anthropic messages or OpenAI
 * Responses API stream. An event without data (a comment, a keep-alive) says nothing; data
 * that is not a JSON object (other than `[DONE]`) is malformed.
 */
export function readStreamEvent(e: SseEvent): StreamEventInfo {
  const data = e.data;
  if (data === undefined || data === '') return NOTHING;
  if (data.charCodeAt(0) === 0x5b /* [ */ && data.trim() === '[DONE]') return DONE;
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    return MALFORMED;
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return MALFORMED;
  const o = json as Record<string, unknown>;
  const type = o.type;
  if (typeof type === 'string') return typed(type, o, e.event);
  if (o.error !== undefined && o.error !== null) return { flags: EventFlag.Error, provider: 'openai', json: o };
  let flags = 0;
  const choices = o.choices;
  if (Array.isArray(choices)) {
    for (const c of choices) flags |= choiceFlags(c);
  }
  const usage = o.usage;
  if (usage !== null && typeof usage === 'object') flags |= EventFlag.Finish;
  return { flags, provider: 'openai', json: o };
}

function choiceFlags(c: unknown): number {
  if (c === null || typeof c !== 'object') return 0;
  const choice = c as { delta?: Record<string, unknown>; text?: unknown; finish_reason?: unknown };
  let flags = typeof choice.finish_reason === 'string' ? EventFlag.Finish : 0;
  const d = choice.delta;
  if (d !== null && typeof d === 'object') {
    if (nonEmpty(d.content) || nonEmpty(d.refusal) || nonEmpty(d.reasoning_content) || nonEmpty(d.reasoning))
      flags |= EventFlag.Content;
    else if ((Array.isArray(d.tool_calls) && d.tool_calls.length > 0) || d.function_call != null)
      flags |= EventFlag.Content;
  } else if (nonEmpty(choice.text)) {
    flags |= EventFlag.Content; // legacy completions
  }
  return flags;
}

function nonEmpty(v: unknown): boolean {
  return typeof v === 'string' ? v.length > 0 : Array.isArray(v) && v.length > 0;
}

function typed(type: string, o: Record<string, unknown>, event: string | undefined): StreamEventInfo {
  if (type.startsWith('response.')) {
    let flags = 0;
    if (type.endsWith('.delta')) flags = EventFlag.Content;
    else if (type === 'response.completed' || type === 'response.incomplete')
      flags = EventFlag.Finish | EventFlag.Terminal;
    else if (type === 'response.failed') flags = EventFlag.Error;
    return { flags, provider: 'responses', json: o };
  }
  switch (type) {
    case 'content_block_delta':
      return { flags: EventFlag.Content, provider: 'anthropic', json: o };
    case 'message_delta': {
      const d = o.delta as { stop_reason?: unknown } | undefined;
      return { flags: typeof d?.stop_reason === 'string' ? EventFlag.Finish : 0, provider: 'anthropic', json: o };
    }
    case 'message_stop':
      return { flags: EventFlag.Finish | EventFlag.Terminal, provider: 'anthropic', json: o };
    case 'message_start':
    case 'content_block_start':
    case 'content_block_stop':
    case 'ping':
      return { flags: 0, provider: 'anthropic', json: o };
    case 'error':
      // Anthropic: `{ type: 'error', error: { type, message } }`; Responses: `{ type: 'error', code, message }`.
      return {
        flags: EventFlag.Error,
        provider: o.error !== undefined || event === 'error' ? 'anthropic' : 'responses',
        json: o,
      };
  }
  return { flags: 0, provider: undefined, json: o };
}

/** The dialect a request path speaks, for an answer that has not shown its own yet. */
export function providerOfPath(path: string): StreamProvider {
  if (path.includes('/messages')) return 'anthropic';
  if (path.includes('/responses')) return 'responses';
  return 'openai';
}

/**
 * An in-band error event in the provider's shape, which its SDK raises as an APIError:
 * OpenAI `data: {"error":{...}}`; Anthropic `event: error` with `{type:'error',error:{...}}`;
 * the Responses API an `error` event that also carries `error` (the OpenAI SDK raises on it).
 */
export function errorEvent(provider: StreamProvider, code: string, message: string): Buffer {
  if (provider === 'anthropic') {
    const body = { type: 'error', error: { type: 'api_error', message: `${message} (${code})` } };
    return Buffer.from(`event: error\ndata: ${JSON.stringify(body)}\n\n`);
  }
  const error = { message, type: 'server_error', param: null, code };
  if (provider === 'responses') {
    const body = { type: 'error', code, message, param: null, error };
    return Buffer.from(`event: error\ndata: ${JSON.stringify(body)}\n\n`);
  }
  return Buffer.from(`data: ${JSON.stringify({ error })}\n\n`);
}
