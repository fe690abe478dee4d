import { providerIds } from './provider-ids.js';
import { estimateChatTokens } from '../engine/token-estimator.js';
import { anthropicError } from '../upstream/provider-shapes.js';
import { describeType, isObject, type AnswerInfo, type Dialect, type Invalid, type Parsed } from './dialect.js';

/** Anthropic words validation errors as `field: problem` (pydantic style). */
const bad = (param: string | null, problem: string, status = 400): Invalid => ({
  status,
  message: param === null ? problem : `${param}: ${problem}`,
  param,
  code: null,
});
const TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  413: 'request_too_large',
};

function parse(body: unknown): Parsed {
  const fail = (e: Invalid): Parsed => ({ ok: false, ...e });
  if (!isObject(body)) return fail(bad(null, `Input should be a valid dictionary, got ${describeType(body)}`));
  const { model, messages, system, max_tokens: max, stream } = body;
  if (model === undefined) return fail(bad('model', 'Field required'));
  if (typeof model !== 'string') return fail(bad('model', 'Input should be a valid string'));
  if (max === undefined) return fail(bad('max_tokens', 'Field required'));
  if (typeof max !== 'number' || !Number.isInteger(max))
    return fail(bad('max_tokens', 'Input should be a valid integer'));
  if (max < 1) return fail(bad('max_tokens', 'Input should be greater than or equal to 1'));
  if (messages === undefined) return fail(bad('messages', 'Field required'));
  if (!Array.isArray(messages)) return fail(bad('messages', 'Input should be a valid list'));
  if (messages.length === 0) return fail(bad('messages', 'at least one message is required'));
  const notObject = messages.findIndex((m) => !isObject(m));
  if (notObject >= 0) return fail(bad(`messages.${notObject}`, 'Input should be a valid dictionary'));
  if (system !== undefined && typeof system !== 'string' && !Array.isArray(system))
    return fail(bad('system', 'Input should be a valid string or a list of text blocks'));
  if (stream !== undefined && typeof stream !== 'boolean')
    return fail(bad('stream', 'Input should be a valid boolean'));
  const promptTokens = estimateChatTokens({ messages: messages as Array<{ content?: unknown }>, system }, undefined, 0);
  return {
    ok: true,
    chat: { model, promptTokens, maxTokens: max, choices: 1, stream: stream === true, includeUsage: true },
  };
}

export const event = (type: string, data: object): string =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

export const message = (a: AnswerInfo, content: object[], stop: string | null, output: number) => ({
  id: a.id,
  type: 'message',
  role: 'assistant',
  model: a.model,
  content,
  stop_reason: stop,
  stop_sequence: null,
  usage: { input_tokens: a.promptTokens, output_tokens: output },
});

/** Anthropic messages (`POST /v1/messages`), as the official SDK reads them. */
export const anthropicDialect: Dialect = {
  name: 'anthropic',
  rateLimitPrefix: 'anthropic-ratelimit-',
  requestIdHeader: 'request-id',
  newId: providerIds.anthropicMessage,
  parse,
  invalid: (e) => ({ type: 'error', error: { type: TYPES[e.status] ?? 'invalid_request_error', message: e.message } }),
  unknownModel: (model) => bad('model', model, 404),
  error: anthropicError,
  modelList: (names, created) => ({
    data: names.map((id) => ({
      type: 'model',
      id,
      display_name: id,
      created_at: new Date(created * 1000).toISOString(),
    })),
    has_more: false,
    first_id: names[0] ?? null,
    last_id: names[names.length - 1] ?? null,
  }),
  completion: (a, text, output) => message(a, [{ type: 'text', text }], 'end_turn', output),
  streamOpen: (a) =>
    event('message_start', { message: message(a, [], null, 1) }) +
    event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  streamDelta: (_a, text) => event('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }),
  streamClose: (_a, output) =>
    event('content_block_stop', { index: 0 }) +
    event('message_delta', {
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: output },
    }) +
    event('message_stop', {}),
  // The SDK throws an APIError for an `error` event.
  streamError: (e) => `event: error\ndata: ${JSON.stringify(e.body)}\n\n`,
};
