import type { IncomingMessage, ServerResponse } from 'node:http';
import { isObject, type Invalid } from './dialect.js';
import type { Refuse } from './json-request.js';
import { withItemId } from './response-input-items.js';
import type { ResponseStore } from './response-store.js';
import { responsesDialect } from './responses-dialect.js';
import { sendJson } from './send-json.js';

/** What a Responses request continues and whether its answer is kept. */
export interface Conversation {
  /** The stored conversation it continues, that response's output, then its own input items. */
  input: unknown[];
  /** About how many characters the conversation holds (bodies as sent, outputs as stored). */
  chars: number;
  /** `store` (the API's default: true). */
  store: boolean;
}

const bad = (message: string, param: string, code: string): Invalid => ({ status: 400, message, param, code });

/**
 * A Responses request body with the conversation it continues in front of its own input, as
 * the API reads `previous_response_id`: the stored response's input items, its output, then
 * the new input. An id never given out, not stored (`store: false`), deleted or evicted is
 * the API's 400 on `previous_response_id`. A conversation longer than `maxChars` (the body
 * limit: what a client sending it whole could send) is the API's `context_length_exceeded`.
 * A body whose fields have the wrong types is passed on as it is, for the dialect to refuse.
 */
export function continueConversation(
  store: ResponseStore,
  value: unknown,
  bodyChars: number,
  maxChars: number,
): { ok: true; value: unknown; conversation?: Conversation } | ({ ok: false } & Invalid) {
  if (!isObject(value)) return { ok: true, value };
  const { previous_response_id: previous, input } = value;
  const own = typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : input;
  const kept = value.store !== false;
  if (!Array.isArray(own) || (previous !== undefined && previous !== null && typeof previous !== 'string'))
    return { ok: true, value };
  if (typeof previous !== 'string')
    return { ok: true, value, conversation: { input: own, chars: bodyChars, store: kept } };
  const stored = store.get(previous);
  if (stored === undefined)
    return {
      ok: false,
      ...bad(
        `Previous response with id '${previous}' not found.`,
        'previous_response_id',
        'previous_response_not_found',
      ),
    };
  const chars = stored.chars + bodyChars;
  if (chars > maxChars)
    return {
      ok: false,
      ...bad(
        'Your input exceeds the context window of this model. Please adjust your input and try again.',
        'input',
        'context_length_exceeded',
      ),
    };
  const conversation = [...stored.input, ...stored.output, ...own];
  return {
    ok: true,
    value: { ...value, input: conversation },
    conversation: { input: conversation, chars, store: kept },
  };
}

/** Keeps a finished answer to `conversation` (when it asked to be stored), each input item with an id (`input_items` lists them by it). */
export function storeAnswer(store: ResponseStore, conversation: Conversation, response: Record<string, unknown>): void {
  if (!conversation.store || typeof response.id !== 'string') return;
  const output = Array.isArray(response.output) ? response.output : [];
  store.set(response.id, {
    response,
    input: conversation.input.map(withItemId),
    output,
    chars: conversation.chars + JSON.stringify(output).length,
  });
}

/** `GET /v1/responses/{id}` (the stored response) and `DELETE` (forgets it); an id not stored is the API's 404. */
export function storedResponseRoutes(
  store: ResponseStore,
  refuse: Refuse,
): Record<'GET' | 'DELETE', (req: IncomingMessage, res: ServerResponse) => void> {
  const notFound = (res: ServerResponse, id: string) =>
    refuse(res, responsesDialect, {
      status: 404,
      message: `Response with id '${id}' not found.`,
      param: null,
      code: null,
    });
  return {
    GET: (req, res) => {
      const id = responseIdOf(req);
      const e = store.get(id);
      if (e === undefined) return notFound(res, id);
      sendJson(res, 200, e.response);
    },
    DELETE: (req, res) => {
      const id = responseIdOf(req);
      if (!store.delete(id)) return notFound(res, id);
      sendJson(res, 200, { id, object: 'response', deleted: true });
    },
  };
}

/** The `{id}` of `/v1/responses/{id}` (percent-decoded when it is well formed). */
function responseIdOf(req: IncomingMessage): string {
  const url = req.url ?? '';
  const path = url.split('?', 1)[0];
  const raw = path.slice(path.lastIndexOf('/') + 1);
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
