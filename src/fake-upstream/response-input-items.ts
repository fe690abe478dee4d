import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Invalid } from './dialect.js';
import type { Refuse } from './json-request.js';
import { providerIds } from './provider-ids.js';
import type { ResponseStore } from './response-store.js';
import { responsesDialect } from './responses-dialect.js';
import { sendJson } from './send-json.js';

/** `limit` of `GET /v1/responses/{id}/input_items`: the API's range and default. */
const LIMIT = { min: 1, max: 100, default: 20 } as const;

/**
 * The `include` values the API takes. Each names a part of an item serve never stores (images,
 * search results, encrypted reasoning, logprobs), so each is accepted and adds nothing; any
 * other value is the API's 400.
 */
const INCLUDABLE = new Set([
  'file_search_call.results',
  'web_search_call.results',
  'web_search_call.action.sources',
  'message.input_image.image_url',
  'computer_call_output.output.image_url',
  'code_interpreter_call.outputs',
  'reasoning.encrypted_content',
  'message.output_text.logprobs',
]);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * An input item as a stored conversation keeps it: with an `id` of its own (one it came with, or a
 * new one: `msg_…` for a message, `fc_…` for a function call, `item_…` for anything else), so a
 * listing's ids stay the same from page to page and an `after` cursor finds its item.
 */
export function withItemId(item: unknown): unknown {
  if (!isRecord(item) || typeof item.id === 'string') return item;
  const type = item.type ?? (item.role === undefined ? undefined : 'message');
  const id =
    type === 'message'
      ? providerIds.responseMessage()
      : type === 'function_call'
        ? providerIds.functionCall()
        : providerIds.responseItem();
  return { id, ...item };
}

/** A stored item as the listing shows it: an easy message (`{role, content: "text"}`) in the API's full form. */
function listed(item: unknown): unknown {
  if (!isRecord(item) || item.role === undefined || (item.type !== undefined && item.type !== 'message')) return item;
  const content =
    typeof item.content === 'string'
      ? [
          item.role === 'assistant'
            ? { type: 'output_text', text: item.content, annotations: [] }
            : { type: 'input_text', text: item.content },
        ]
      : item.content;
  return { ...item, type: 'message', content, status: item.status ?? 'completed' };
}

const bad = (message: string, param: string, code: string | null): Invalid => ({ status: 400, message, param, code });

/** The query of a listing, or what is wrong with it (the API's 400, naming the parameter). */
function listQuery(
  query: URLSearchParams,
): { ok: true; limit: number; asc: boolean; after: string | null } | ({ ok: false } & Invalid) {
  const rawLimit = query.get('limit');
  let limit: number = LIMIT.default;
  if (rawLimit !== null) {
    if (!/^-?\d+$/.test(rawLimit))
      return { ok: false, ...bad(`Invalid 'limit': expected an integer, got '${rawLimit}'.`, 'limit', 'invalid_type') };
    limit = Number(rawLimit);
    if (limit < LIMIT.min)
      return {
        ok: false,
        ...bad(
          `Invalid 'limit': integer below minimum value. Expected a value >= ${LIMIT.min}, but got ${limit} instead.`,
          'limit',
          'integer_below_min_value',
        ),
      };
    if (limit > LIMIT.max)
      return {
        ok: false,
        ...bad(
          `Invalid 'limit': integer above maximum value. Expected a value <= ${LIMIT.max}, but got ${limit} instead.`,
          'limit',
          'integer_above_max_value',
        ),
      };
  }
  const order = query.get('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc')
    return {
      ok: false,
      ...bad(`Invalid value: '${order}'. Supported values are: 'asc' and 'desc'.`, 'order', 'invalid_value'),
    };
  for (const key of ['include', 'include[]']) {
    for (const v of query.getAll(key))
      if (!INCLUDABLE.has(v))
        return {
          ok: false,
          ...bad(
            `Invalid value: '${v}'. Supported values are: ${[...INCLUDABLE].map((x) => `'${x}'`).join(', ')}.`,
            'include',
            'invalid_value',
          ),
        };
  }
  return { ok: true, limit, asc: order === 'asc', after: query.get('after') };
}

/**
 * `GET /v1/responses/{id}/input_items`: the items the stored response answered — the
 * conversation it continued (that one's input and output) and its own input — as the API's
 * cursor page: `limit` (1–100, 20), `order` (`desc`, the API's default, or `asc`), `after` an
 * item id (an id not in the list is a 400 on `after`), `include` (the API's values, none of which
 * adds anything here). An id not stored is the API's 404, as `GET /v1/responses/{id}`.
 */
export function inputItemsRoute(
  store: ResponseStore,
  refuse: Refuse,
): Record<'GET', (req: IncomingMessage, res: ServerResponse) => void> {
  return {
    GET: (req, res) => {
      const url = new URL(req.url ?? '/', 'http://serve');
      const parts = url.pathname.split('/');
      const raw = parts[parts.length - 2] ?? '';
      let id = raw;
      try {
        id = decodeURIComponent(raw);
      } catch {}
      const stored = store.get(id);
      if (stored === undefined)
        return refuse(res, responsesDialect, {
          status: 404,
          message: `Response with id '${id}' not found.`,
          param: null,
          code: null,
        });
      const q = listQuery(url.searchParams);
      if (!q.ok) return refuse(res, responsesDialect, q);
      const items = q.asc ? stored.input : [...stored.input].reverse();
      let from = 0;
      if (q.after !== null) {
        const at = items.findIndex((item) => isRecord(item) && item.id === q.after);
        if (at < 0)
          return refuse(
            res,
            responsesDialect,
            bad(`No input item with id '${q.after}' in response '${id}'.`, 'after', 'invalid_value'),
          );
        from = at + 1;
      }
      const data = items.slice(from, from + q.limit).map(listed);
      const idOf = (item: unknown): string | null => (isRecord(item) && typeof item.id === 'string' ? item.id : null);
      sendJson(res, 200, {
        object: 'list',
        data,
        first_id: data.length > 0 ? idOf(data[0]) : null,
        last_id: data.length > 0 ? idOf(data[data.length - 1]) : null,
        has_more: from + q.limit < items.length,
      });
    },
  };
}
