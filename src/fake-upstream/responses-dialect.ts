import { providerIds } from './provider-ids.js';
import { estimateChatTokens } from '../engine/token-estimator.js';
import { describeType, isObject, type AnswerInfo, type Dialect, type Invalid, type Parsed } from './dialect.js';
import { openaiDialect } from './openai-dialect.js';
import type { AnswerShape } from './answer-length.js';
import { chunkCount, PacedEvents, pieces } from './paced-events.js';
import type { ReplyPlan } from './reply-plan.js';

const bad = (message: string, param: string | null, code: string | null = null): Invalid => ({
  status: 400,
  message,
  param,
  code,
});
const typeError = (field: string, expected: string, v: unknown): Invalid =>
  bad(`Invalid type for '${field}': expected ${expected}, but got ${describeType(v)} instead.`, field, 'invalid_type');

/** The Responses API's own floor for `max_output_tokens`. */
const MIN_OUTPUT_TOKENS = 16;

function parse(body: unknown, defaultMaxTokens: number): Parsed {
  const fail = (e: Invalid): Parsed => ({ ok: false, ...e });
  if (!isObject(body))
    return fail(bad(`Invalid body: expected a JSON object, but got ${describeType(body)} instead.`, null));
  const { model, input, instructions, stream, max_output_tokens: max, store, previous_response_id: previous } = body;
  if (model === undefined || model === null)
    return fail(bad('you must provide a model parameter', 'model', 'missing_required_parameter'));
  if (typeof model !== 'string') return fail(typeError('model', 'a string', model));
  if (input === undefined)
    return fail(bad("Missing required parameter: 'input'.", 'input', 'missing_required_parameter'));
  if (typeof input !== 'string' && !Array.isArray(input))
    return fail(typeError('input', 'a string or an array', input));
  if (instructions !== undefined && instructions !== null && typeof instructions !== 'string')
    return fail(typeError('instructions', 'a string', instructions));
  if (max !== undefined && max !== null) {
    if (typeof max !== 'number' || !Number.isInteger(max))
      return fail(typeError('max_output_tokens', 'an integer', max));
    if (max < MIN_OUTPUT_TOKENS)
      return fail(
        bad(
          `Invalid 'max_output_tokens': integer below minimum value. Expected a value >= ${MIN_OUTPUT_TOKENS}, but got ${max} instead.`,
          'max_output_tokens',
          'integer_below_min_value',
        ),
      );
  }
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean')
    return fail(typeError('stream', 'a boolean', stream));
  if (store !== undefined && store !== null && typeof store !== 'boolean')
    return fail(typeError('store', 'a boolean', store));
  if (previous !== undefined && previous !== null && typeof previous !== 'string')
    return fail(typeError('previous_response_id', 'a string', previous));
  const items = typeof input === 'string' ? [{ content: input }] : input;
  const messages = items.map((i) =>
    isObject(i) ? { content: i.content ?? i.output ?? i.arguments ?? '' } : { content: '' },
  );
  return {
    ok: true,
    chat: {
      model,
      promptTokens: estimateChatTokens({ messages, system: instructions ?? undefined }, undefined, 0),
      maxTokens: typeof max === 'number' ? max : defaultMaxTokens,
      choices: 1,
      stream: stream === true,
      includeUsage: true,
    },
  };
}

/**
 * The OpenAI Responses API (`POST /v1/responses`): requests and errors as OpenAI's, answers
 * rendered by `responsesReply` (one per request: a stream numbers its events).
 */
export const responsesDialect: Dialect = {
  ...openaiDialect,
  newId: providerIds.response,
  parse,
};

/** What a Responses answer echoes of its request. */
export interface ResponsesEcho {
  tools: unknown[];
  toolChoice: unknown;
  text: unknown;
  instructions: string | null;
  maxOutputTokens: number | null;
  parallelToolCalls: boolean;
  /** The `previous_response_id` asked for (null when none). */
  previousResponseId: string | null;
  /** Whether the answer is kept (`store`, true unless false). */
  store: boolean;
  /** Hears the response object once it is whole (the JSON answer, a stream's last event): the store keeps it. */
  onDone?(response: Record<string, unknown>): void;
}

/** Item ids of one answer: the message and, per call, the function_call item. */
interface Item {
  id: string;
  object: Record<string, unknown>;
}

/**
 * A Responses answer rendering `plan`: a `message` item with `output_text`, or `function_call`
 * items; `status: incomplete` with `incomplete_details.reason: max_output_tokens` when the
 * limit cut it (planned text, or filler whose natural length is past `max_output_tokens`).
 * Streamed: `response.created`, `response.in_progress`, per item `output_item.added`, its
 * deltas (`output_text.delta` or `function_call_arguments.delta`) and `.done` events,
 * `output_item.done`, then `response.completed` (or `response.incomplete`) with the whole
 * response. `onItem` hears each function_call item id, so later `item_reference`s resolve. Item
 * ids (`msg_…`, `fc_…`) are random, made once per answer.
 */
export function responsesReply(
  plan: ReplyPlan,
  echo: ResponsesEcho,
  shape: AnswerShape,
  onItem: (id: string) => void,
): Dialect {
  let seq = 0;
  let streamed = '';
  const slots = chunkCount(shape.total);
  const status = shape.truncated[0] ? 'incomplete' : 'completed';
  // The answer's item ids, made once: its JSON, its stream and what is stored say the same.
  const callIds = plan.kind === 'tools' ? plan.calls.map(() => providerIds.functionCall()) : [];
  for (const id of callIds) onItem(id);
  const messageId = providerIds.responseMessage();
  const items = (text: string): Item[] =>
    plan.kind === 'tools'
      ? plan.calls.map((c, k) => {
          const id = callIds[k];
          return {
            id,
            object: {
              type: 'function_call',
              id,
              call_id: c.id,
              name: c.name,
              arguments: c.arguments,
              status: 'completed',
            },
          };
        })
      : [
          {
            id: messageId,
            object: {
              type: 'message',
              id: messageId,
              status,
              role: 'assistant',
              content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
            },
          },
        ];
  const response = (a: AnswerInfo, state: string, output: object[], completion: number | null) => ({
    id: a.id,
    object: 'response',
    created_at: a.created,
    status: state,
    error: null,
    incomplete_details: state === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: echo.instructions,
    max_output_tokens: echo.maxOutputTokens,
    model: a.model,
    output,
    parallel_tool_calls: echo.parallelToolCalls,
    previous_response_id: echo.previousResponseId,
    reasoning: { effort: null, summary: null },
    store: echo.store,
    temperature: 1,
    text: echo.text ?? { format: { type: 'text' } },
    tool_choice: echo.toolChoice ?? 'auto',
    tools: echo.tools,
    top_p: 1,
    truncation: 'disabled',
    usage:
      completion === null
        ? null
        : {
            input_tokens: a.promptTokens,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: completion,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: a.promptTokens + completion,
          },
    metadata: {},
  });
  const ev = (type: string, data: object): string =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`;
  const textOf = (): string => (plan.kind === 'text' ? plan.text : '');
  let paced: PacedEvents<(a: AnswerInfo) => string> | undefined;
  let planned: Item[] = [];
  const plannedEvents = (): Array<(a: AnswerInfo) => string> => {
    planned = items(textOf());
    if (plan.kind === 'tools') {
      const per = Math.max(1, Math.floor(slots / Math.max(1, plan.calls.length)) - 2);
      return planned.flatMap((item, output_index) => {
        const args = String(item.object.arguments);
        return [
          () =>
            ev('response.output_item.added', {
              output_index,
              item: { ...item.object, arguments: '', status: 'in_progress' },
            }),
          ...pieces(args, per).map(
            (delta) => () => ev('response.function_call_arguments.delta', { item_id: item.id, output_index, delta }),
          ),
          () => ev('response.function_call_arguments.done', { item_id: item.id, output_index, arguments: args }),
          () => ev('response.output_item.done', { output_index, item: item.object }),
        ];
      });
    }
    if (plan.kind === 'text') return pieces(plan.text, slots).map((delta) => () => textDelta(delta));
    return [];
  };
  const textDelta = (delta: string): string => {
    streamed += delta;
    return ev('response.output_text.delta', {
      item_id: messageId,
      output_index: 0,
      content_index: 0,
      delta,
      logprobs: [],
    });
  };
  const openMessage = (): string => {
    if (plan.kind === 'tools') return '';
    const item = planned[0];
    return (
      ev('response.output_item.added', {
        output_index: 0,
        item: { ...item.object, status: 'in_progress', content: [] },
      }) +
      ev('response.content_part.added', {
        item_id: item.id,
        output_index: 0,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      })
    );
  };
  const closeMessage = (): { text: string; output: object[] } => {
    if (plan.kind === 'tools') return { text: '', output: planned.map((i) => i.object) };
    const [item] = items(streamed);
    const part = { type: 'output_text', text: streamed, annotations: [] };
    return {
      text:
        ev('response.output_text.done', {
          item_id: item.id,
          output_index: 0,
          content_index: 0,
          text: streamed,
          logprobs: [],
        }) +
        ev('response.content_part.done', { item_id: item.id, output_index: 0, content_index: 0, part }) +
        ev('response.output_item.done', { output_index: 0, item: item.object }),
      output: [item.object],
    };
  };
  const run = (a: AnswerInfo, fns: Array<(a: AnswerInfo) => string>) => fns.map((f) => f(a)).join('');
  return {
    ...responsesDialect,
    completion: (a, filler, completion) => {
      const done = response(
        a,
        status,
        items(plan.kind === 'filler' ? filler : textOf()).map((i) => i.object),
        completion,
      );
      echo.onDone?.(done);
      return done;
    },
    streamOpen: (a) => {
      paced = new PacedEvents(plannedEvents(), shape.total);
      const start = response(a, 'in_progress', [], null);
      return (
        ev('response.created', { response: start }) + ev('response.in_progress', { response: start }) + openMessage()
      );
    },
    streamDelta: (a, filler) => (plan.kind === 'filler' ? textDelta(filler) : run(a, paced?.next() ?? [])),
    streamClose: (a, completion) => {
      const rest = run(a, paced?.rest() ?? []);
      const closed = closeMessage();
      const done = response(a, status, closed.output, completion);
      echo.onDone?.(done);
      return (
        rest +
        closed.text +
        ev(status === 'completed' ? 'response.completed' : 'response.incomplete', { response: done })
      );
    },
    // A stream that breaks: the SDKs raise an `error` event as an APIError.
    streamError: (e) => {
      const err = (e.body as { error?: { message?: string; code?: string | null; type?: string } }).error ?? {};
      return ev('error', {
        code: err.code ?? err.type ?? 'server_error',
        message: err.message ?? 'stream broke',
        param: null,
      });
    },
  };
}
