import { providerIds } from './provider-ids.js';
import { estimateChatTokens } from '../engine/token-estimator.js';
import { openaiError } from '../upstream/provider-shapes.js';
import { describeType, isObject, type AnswerInfo, type Dialect, type Invalid, type Parsed } from './dialect.js';

const bad = (message: string, param: string | null, code: string | null = null, status = 400): Invalid => ({
  status,
  message,
  param,
  code,
});
const typeError = (field: string, expected: string, v: unknown): Invalid =>
  bad(`Invalid type for '${field}': expected ${expected}, but got ${describeType(v)} instead.`, field, 'invalid_type');

/** `max_tokens` and friends: absent or null, or an integer >= 1. */
function tokenLimit(body: Record<string, unknown>, field: string): Invalid | number | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) return typeError(field, 'an integer', v);
  if (v < 1)
    return bad(
      `Invalid '${field}': integer below minimum value. Expected a value >= 1, but got ${v} instead.`,
      field,
      'integer_below_min_value',
    );
  return v;
}

/** The most choices (`n`) one request may ask for, as OpenAI allows. */
export const MAX_CHOICES = 128;

/** `n`: absent or null (1), or an integer from 1 to MAX_CHOICES. */
function choiceCount(v: unknown): Invalid | number {
  if (v === undefined || v === null) return 1;
  if (typeof v !== 'number' || !Number.isInteger(v)) return typeError('n', 'an integer', v);
  if (v < 1)
    return bad(
      `Invalid 'n': integer below minimum value. Expected a value >= 1, but got ${v} instead.`,
      'n',
      'integer_below_min_value',
    );
  if (v > MAX_CHOICES)
    return bad(
      `Invalid 'n': integer above maximum value. Expected a value <= ${MAX_CHOICES}, but got ${v} instead.`,
      'n',
      'integer_above_max_value',
    );
  return v;
}

function parse(body: unknown, defaultMaxTokens: number): Parsed {
  const fail = (e: Invalid): Parsed => ({ ok: false, ...e });
  if (!isObject(body))
    return fail(bad(`Invalid body: expected a JSON object, but got ${describeType(body)} instead.`, null));
  const { model, messages, stream, stream_options: options } = body;
  if (model === undefined || model === null)
    return fail(bad('you must provide a model parameter', 'model', 'missing_required_parameter'));
  if (typeof model !== 'string') return fail(typeError('model', 'a string', model));
  if (messages === undefined)
    return fail(bad("Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter'));
  if (!Array.isArray(messages)) return fail(typeError('messages', 'an array of objects', messages));
  if (messages.length === 0)
    return fail(
      bad(
        "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
        'messages',
        'empty_array',
      ),
    );
  const notObject = messages.findIndex((m) => !isObject(m));
  if (notObject >= 0) return fail(typeError(`messages[${notObject}]`, 'an object', messages[notObject]));
  const limits = [tokenLimit(body, 'max_completion_tokens'), tokenLimit(body, 'max_tokens')];
  const wrong = limits.find((l): l is Invalid => typeof l === 'object');
  if (wrong !== undefined) return fail(wrong);
  const choices = choiceCount(body.n);
  if (typeof choices === 'object') return fail(choices);
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean')
    return fail(typeError('stream', 'a boolean', stream));
  if (options !== undefined && options !== null && !isObject(options))
    return fail(typeError('stream_options', 'an object', options));
  const include = isObject(options) ? options.include_usage : undefined;
  if (include !== undefined && include !== null && typeof include !== 'boolean')
    return fail(typeError('stream_options.include_usage', 'a boolean', include));
  return {
    ok: true,
    chat: {
      model,
      promptTokens: estimateChatTokens({ messages: messages as Array<{ content?: unknown }> }, undefined, 0),
      maxTokens: (limits[0] ?? limits[1] ?? defaultMaxTokens) as number,
      choices,
      stream: stream === true,
      includeUsage: include === true,
    },
  };
}

export const sse = (data: object | string): string =>
  `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;

export function chunk(a: AnswerInfo, delta: object, finish: string | null, index = 0): object {
  const c: Record<string, unknown> = {
    id: a.id,
    object: 'chat.completion.chunk',
    created: a.created,
    model: a.model,
    system_fingerprint: 'fp_stormlab',
    choices: [{ index, delta, logprobs: null, finish_reason: finish }],
  };
  if (a.includeUsage) c.usage = null;
  return c;
}

export const usage = (a: AnswerInfo, completion: number) => ({
  prompt_tokens: a.promptTokens,
  completion_tokens: completion,
  total_tokens: a.promptTokens + completion,
});

/** OpenAI chat completions (`POST /v1/chat/completions`), as the official SDK reads them. */
export const openaiDialect: Dialect = {
  name: 'openai',
  rateLimitPrefix: 'x-ratelimit-',
  requestIdHeader: 'x-request-id',
  newId: providerIds.chatCompletion,
  parse,
  invalid: (e) => ({ error: { message: e.message, type: 'invalid_request_error', param: e.param, code: e.code } }),
  unknownModel: (model) =>
    bad(`The model \`${model}\` does not exist or you do not have access to it.`, 'model', 'model_not_found', 404),
  error: openaiError,
  wireStatus: (status) => (status === 529 ? 503 : status),
  modelList: (names, created) => ({
    object: 'list',
    data: names.map((id) => ({ id, object: 'model', created, owned_by: 'stormlab' })),
  }),
  completion: (a, text, completion) => ({
    id: a.id,
    object: 'chat.completion',
    created: a.created,
    model: a.model,
    system_fingerprint: 'fp_stormlab',
    choices: [
      { index: 0, message: { role: 'assistant', content: text, refusal: null }, logprobs: null, finish_reason: 'stop' },
    ],
    usage: usage(a, completion),
  }),
  streamOpen: (a) => sse(chunk(a, { role: 'assistant', content: '', refusal: null }, null)),
  streamDelta: (a, text) => sse(chunk(a, { content: text }, null)),
  streamClose: (a, completion) => {
    let out = sse(chunk(a, {}, 'stop'));
    if (a.includeUsage) {
      out += sse({
        id: a.id,
        object: 'chat.completion.chunk',
        created: a.created,
        model: a.model,
        system_fingerprint: 'fp_stormlab',
        choices: [],
        usage: usage(a, completion),
      });
    }
    return out + sse('[DONE]');
  },
  // The SDK throws an APIError for a data line carrying `error`.
  streamError: (e) => sse(e.body),
};
