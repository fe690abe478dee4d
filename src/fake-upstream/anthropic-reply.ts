import { event, message } from './anthropic-dialect.js';
import type { AnswerShape } from './answer-length.js';
import type { Dialect } from './dialect.js';
import { chunkCount, PacedEvents, pieces } from './paced-events.js';
import type { ReplyPlan } from './reply-plan.js';

/**
 * Anthropic messages rendering `plan`: `tool_use` content blocks (JSON) or their stream
 * (`content_block_start` with the id and name, `input_json_delta` pieces, `content_block_stop`),
 * the planned text or filler, and the stop reason (`tool_use`, `max_tokens` when the limit cut
 * it, else `end_turn`). A plain filler answer that ends by itself keeps the base dialect as it is.
 */
export function anthropicReply(base: Dialect, plan: ReplyPlan, shape: AnswerShape): Dialect {
  const truncated = shape.truncated[0];
  if (plan.kind === 'filler' && !truncated) return base;
  const stop = truncated ? 'max_tokens' : plan.kind === 'tools' ? 'tool_use' : 'end_turn';
  const paced = new PacedEvents(streamEvents(plan, chunkCount(shape.total)), shape.total);
  const content = (filler: string): object[] =>
    plan.kind === 'tools'
      ? plan.calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: parseOrPartial(c.arguments) }))
      : [{ type: 'text', text: plan.kind === 'text' ? plan.text : filler }];
  // Tool blocks open themselves; a text answer's block opens with the message, as the base does.
  const textBlock =
    plan.kind === 'tools' ? '' : event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
  return {
    ...base,
    completion: (a, filler, output) => message(a, content(filler), stop, output),
    streamOpen: (a) => event('message_start', { message: message(a, [], null, 1) }) + textBlock,
    streamDelta: (_a, filler) =>
      plan.kind === 'filler'
        ? event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: filler } })
        : paced.next().join(''),
    streamClose: (_a, output) =>
      paced.rest().join('') +
      (plan.kind === 'tools' ? '' : event('content_block_stop', { index: 0 })) +
      event('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: output } }) +
      event('message_stop', {}),
  };
}

function streamEvents(plan: ReplyPlan, slots: number): string[] {
  if (plan.kind === 'text')
    return pieces(plan.text, slots).map((text) =>
      event('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }),
    );
  if (plan.kind !== 'tools') return [];
  const per = Math.max(1, Math.floor(slots / Math.max(1, plan.calls.length)) - 2);
  return plan.calls.flatMap((c, index) => [
    event('content_block_start', { index, content_block: { type: 'tool_use', id: c.id, name: c.name, input: {} } }),
    ...pieces(c.arguments, per).map((partial_json) =>
      event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } }),
    ),
    event('content_block_stop', { index }),
  ]);
}

/** A tool call's input: its JSON, or (cut at the token limit) an empty object as the API gives. */
function parseOrPartial(args: string): unknown {
  try {
    return JSON.parse(args);
  } catch {
    return {};
  }
}
