import { RequestFlag } from '../upstream/response.js';
import { prefillText, prefillWords } from './prefill.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { anthropicDialect } from './anthropic-dialect.js';
import { anthropicReply } from './anthropic-reply.js';
import { OUTPUT_TOKENS_HEADER } from '../upstream/output-tokens-header.js';
import { type AnswerLengths, type AnswerShape, lengthHeader } from './answer-length.js';
import { isObject, type ChatRequest, type Dialect, type Invalid } from './dialect.js';
import { embeddingsDialect, embeddingsReply } from './embeddings.js';
import { Exchange, type ExchangeContext } from './exchange.js';
import type { ExchangeTable } from './exchange-table.js';
import type { ParseJson, ReadText, Refuse } from './json-request.js';
import { KnownBodies } from './known-bodies.js';
import type { ModelNames } from './model-names.js';
import { openaiDialect } from './openai-dialect.js';
import { openaiReply } from './openai-reply.js';
import { providerIds } from './provider-ids.js';
import { planReply, type ReplyPlan } from './reply-plan.js';
import type { RequestLog } from './request-log.js';
import { inputItemsRoute } from './response-input-items.js';
import { responsesDialect, responsesReply } from './responses-dialect.js';
import type { ResponseStore } from './response-store.js';
import { type Conversation, continueConversation, storeAnswer, storedResponseRoutes } from './responses-state.js';
import { sendJson } from './send-json.js';
import type { ToolPolicy } from './tool-policy.js';
import { type Provider, readToolRequest } from './tool-request.js';

/**
 * A route's handler. What it throws, or its promise rejects with, answers 500; one that goes on
 * in a callback of its own (after the body is read) hands what that throws to `fail`.
 */
type Handler = (req: IncomingMessage, res: ServerResponse, fail: (err: unknown) => void) => void | Promise<void>;
export type Routes = Record<string, Record<string, Handler>>;

/** What the model routes share with the server. */
export interface ModelRouteContext {
  exchange: ExchangeContext;
  table: ExchangeTable;
  names: ModelNames;
  log: RequestLog;
  readText: ReadText;
  parseJson: ParseJson;
  refuse: Refuse;
  defaultMaxTokens: number;
  seed: number;
  /** How long each answer runs. */
  lengths: AnswerLengths;
  toolPolicy(): ToolPolicy;
  /** Ends an exchange's bookkeeping once its response closes. */
  finish(ex: Exchange): void;
  submitted(model: string): void;
  /** How long ago the request arrived, when the server took long to get to it (a burst of connections), ms; 0 otherwise. */
  waitedMs(req: IncomingMessage): number;
  /** The stored Responses answers (`previous_response_id`, `GET`/`DELETE /v1/responses/{id}`). */
  responses: ResponseStore;
  /** The longest conversation a `previous_response_id` carries, in characters (the body limit). */
  maxConversationChars: number;
}

/**
 * How one route answers: what the answer says (`plan`; filler when absent) and how it is written
 * for one request in the length it runs (the dialect, or a per-request rendering of the plan).
 * `fixed`: the answer's length is the request's own (embeddings), not a natural length.
 */
interface Reply {
  /** The body as the model reads it (a Responses continuation: with the stored conversation), before it is parsed. */
  prepare?(
    value: unknown,
    chars: number,
  ): { ok: true; value: unknown; conversation?: Conversation } | ({ ok: false } & Invalid);
  plan?(body: Record<string, unknown>, request: ChatRequest): ReplyPlan;
  render(plan: ReplyPlan, shape: AnswerShape, body: Record<string, unknown>, conversation?: Conversation): Dialect;
  fixed?: boolean;
  /** The route reads a trailing assistant message as a prefill to continue (chat completions, messages). */
  continues?: boolean;
}

/** The plain answer: filler text, as long as the answer runs. */
const FILLER: ReplyPlan = { kind: 'filler', truncated: false };

/** Responses item ids given out, so an `item_reference` to a function call is read as one. */
const MAX_ITEMS = 10_000;
/** Plain bodies remembered per route (past it the memory starts over), and the longest remembered. */
const MAX_KNOWN_BODIES = 256;
const MAX_KNOWN_BODY_CHARS = 16_384;

/** What a request's body says, and so what it is answered (a plain body's is read once for every request that sends the same text). */
interface ReadBody {
  request: ChatRequest;
  index: number;
  flags: number;
  body: Record<string, unknown>;
  plan: ReplyPlan;
  /** The body carries its own integer `seed` (OpenAI's): its answer's length does not change on a repeat. */
  seeded: boolean;
  /** Filler words a trailing assistant message holds: the answer continues after them (0: none, or not filler). */
  continued: number;
  conversation?: Conversation;
}

/**
 * The model routes: OpenAI chat completions, Anthropic messages, the OpenAI Responses API and
 * embeddings all become one `Exchange` with the model; `/v1/models` lists the names served.
 */
export function modelRoutes(c: ModelRouteContext): Routes {
  const items = new Set<string>();
  const rememberItem = (id: string) => {
    if (items.size >= MAX_ITEMS) items.clear();
    items.add(id);
  };
  const plan = (provider: Provider, body: Record<string, unknown>, request: ChatRequest, newCallId: () => string) =>
    planReply(
      readToolRequest(provider, body, (id) => items.has(id)),
      {
        policy: c.toolPolicy(),
        seed: c.seed,
        maxTokens: request.maxTokens,
        newCallId,
      },
    );

  /**
   * A model route. With `remember`, a body that offers no tools and gets filler is remembered by
   * its text: a client that sends the same body again (a load tool, an agent's retries) skips
   * parsing, validation, the token estimate and the reply plan, which depend on nothing but that
   * text then. Its length is drawn for each request (`AnswerLengths`), or set by the
   * `x-stormlab-output-tokens` header.
   */
  const model = (route: string, dialect: Dialect, reply: Reply, remember = false): Handler => {
    const known = new KnownBodies<ReadBody>(MAX_KNOWN_BODIES);
    const read = (res: ServerResponse, text: string): ReadBody | undefined => {
      const json = c.parseJson(res, dialect, text);
      if (json === undefined) return undefined;
      const prepared = reply.prepare?.(json.value, text.length) ?? { ok: true, value: json.value };
      if (!prepared.ok) return void c.refuse(res, dialect, prepared);
      const body = { value: prepared.value };
      const parsed = dialect.parse(body.value, c.defaultMaxTokens);
      if (!parsed.ok) return void c.refuse(res, dialect, parsed);
      const { chat: request } = parsed;
      c.log.request(res, request.model, request.stream);
      const index = c.names.index(request.model);
      if (index < 0) return void c.refuse(res, dialect, dialect.unknownModel(request.model));
      if (res.destroyed) return undefined;
      const value = body.value as Record<string, unknown>;
      const prefill = reply.continues === true ? prefillText(value) : undefined;
      const planned = reply.plan?.(value, request) ?? FILLER;
      const plan = prefill === undefined ? planned : continuePlan(planned, prefill);
      const flags = (request.stream ? RequestFlag.Stream : 0) | (prefill === undefined ? 0 : RequestFlag.Prefill);
      const r = {
        request,
        index,
        flags,
        body: value,
        plan,
        seeded: Number.isInteger(value.seed),
        continued: prefill !== undefined && plan.kind === 'filler' ? prefillWords(prefill) : 0,
        conversation: prepared.conversation,
      };
      if (remember && plan.kind === 'filler' && text.length <= MAX_KNOWN_BODY_CHARS && !offersTools(value))
        known.set(text, r);
      return r;
    };
    const answer = (req: IncomingMessage, res: ServerResponse, text: string): void => {
      const header = lengthHeader(req.headers[OUTPUT_TOKENS_HEADER]);
      if (typeof header === 'object')
        return c.refuse(res, dialect, { status: 400, message: header.bad, param: null, code: 'invalid_header' });
      const hit = remember ? known.get(text) : undefined;
      if (hit !== undefined) {
        c.log.request(res, hit.request.model, hit.request.stream);
        if (res.destroyed) return;
      }
      const r = hit ?? read(res, text);
      if (r === undefined) return;
      const { request, index, flags, plan } = r;
      const shape = c.lengths.shape(
        index,
        text,
        plan,
        request.maxTokens,
        request.choices,
        reply.fixed === true ? 'max' : header,
        r.seeded,
        r.continued,
      );
      const served = reply.render(plan, shape, r.body, r.conversation);
      const slot = c.table.nextSlot();
      const host = c.exchange.host;
      const info = {
        id: dialect.newId(),
        model: request.model,
        created: Math.floor((c.exchange.epochMs + c.exchange.now()) / 1000),
        promptTokens: request.promptTokens,
        includeUsage: request.includeUsage,
      };
      const ex = new Exchange(slot, res, served, request, index, info, c.exchange, served === dialect, r.continued);
      c.table.add(ex);
      res.on('close', () => c.finish(ex));
      ex.model = host.current;
      host.submit(slot, index, request.promptTokens, request.maxTokens, flags, shape.total, c.waitedMs(req), route);
      c.submitted(request.model);
    };
    return (req, res, fail) =>
      c.readText(req, res, dialect, (text) => {
        try {
          answer(req, res, text);
        } catch (err) {
          fail(err);
        }
      });
  };

  return {
    '/v1/chat/completions': {
      POST: model(
        '/v1/chat/completions',
        openaiDialect,
        {
          plan: (body, r) => plan('openai', body, r, providerIds.openaiToolCall),
          render: (p, shape) => openaiReply(openaiDialect, p, shape),
          continues: true,
        },
        true,
      ),
    },
    '/v1/messages': {
      POST: model(
        '/v1/messages',
        anthropicDialect,
        {
          plan: (body, r) => plan('anthropic', body, r, providerIds.anthropicToolUse),
          render: (p, shape) => anthropicReply(anthropicDialect, p, shape),
          continues: true,
        },
        true,
      ),
    },
    '/v1/responses': {
      POST: model('/v1/responses', responsesDialect, {
        prepare: (value, chars) => continueConversation(c.responses, value, chars, c.maxConversationChars),
        plan: (body, r) => plan('responses', body, r, providerIds.openaiToolCall),
        render: (p, shape, body, conversation) =>
          responsesReply(
            p,
            {
              tools: Array.isArray(body.tools) ? body.tools : [],
              toolChoice: body.tool_choice,
              text: isObject(body.text) ? body.text : undefined,
              instructions: typeof body.instructions === 'string' ? body.instructions : null,
              maxOutputTokens: typeof body.max_output_tokens === 'number' ? body.max_output_tokens : null,
              parallelToolCalls: body.parallel_tool_calls !== false,
              previousResponseId: typeof body.previous_response_id === 'string' ? body.previous_response_id : null,
              store: body.store !== false,
              onDone:
                conversation === undefined ? undefined : (response) => storeAnswer(c.responses, conversation, response),
            },
            shape,
            rememberItem,
          ),
      }),
    },
    '/v1/responses/{id}': storedResponseRoutes(c.responses, c.refuse),
    '/v1/responses/{id}/input_items': inputItemsRoute(c.responses, c.refuse),
    '/v1/embeddings': {
      POST: model('/v1/embeddings', embeddingsDialect, {
        render: (_p, _s, body) => embeddingsReply(body),
        fixed: true,
      }),
    },
    '/v1/models': {
      GET: (req, res) => {
        const dialect = req.headers['anthropic-version'] !== undefined ? anthropicDialect : openaiDialect;
        sendJson(res, 200, dialect.modelList(c.names.list(), Math.floor(c.exchange.epochMs / 1000)));
      },
    },
  };
}

/** Whether a body offers tools (then its answer depends on the tool policy too, which can change). */
function offersTools(body: Record<string, unknown>): boolean {
  return Array.isArray(body.tools) && body.tools.length > 0;
}

/**
 * The answer to a prefilled request, on a model that continues it: filler goes on after the
 * prefill's words (the exchange starts there), a planned text that starts with the prefill is
 * its rest; other plans (tool calls, a text the prefill does not start) are answered whole.
 */
function continuePlan(plan: ReplyPlan, prefill: string): ReplyPlan {
  if (plan.kind === 'text' && prefill !== '' && plan.text.startsWith(prefill))
    return { ...plan, text: plan.text.slice(prefill.length) };
  return plan;
}
