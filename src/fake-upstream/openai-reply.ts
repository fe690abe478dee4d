import type { AnswerInfo, Dialect } from './dialect.js';
import { chunk, sse, usage } from './openai-dialect.js';
import { chunkCount, PacedEvents, pieces } from './paced-events.js';
import type { ReplyPlan } from './reply-plan.js';

/**
 * OpenAI chat completions rendering `plan`: `message.tool_calls` (JSON) or `delta.tool_calls`
 * chunks (the first of each call carries its id and name, the next ones argument pieces), the
 * planned text, and the finish reason (`tool_calls`, `length` when cut, else `stop`). A plain
 * filler answer keeps the base dialect as it is.
 */
export function openaiReply(base: Dialect, plan: ReplyPlan, maxTokens: number): Dialect {
  if (plan.kind === 'filler' && !plan.truncated) return base;
  const finish = plan.truncated ? 'length' : plan.kind === 'tools' ? 'tool_calls' : 'stop';
  const slots = chunkCount(maxTokens);
  const paced = new PacedEvents(streamEvents(plan, slots), maxTokens);
  const content = (filler: string): string | null =>
    plan.kind === 'tools' ? null : plan.kind === 'text' ? plan.text : filler;
  return {
    ...base,
    completion: (a, filler, completion) => ({
      id: a.id,
      object: 'chat.completion',
      created: a.created,
      model: a.model,
      system_fingerprint: 'fp_stormlab',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: content(filler),
            refusal: null,
            ...(plan.kind === 'tools' && {
              tool_calls: plan.calls.map((c) => ({
                id: c.id,
                type: 'function',
                function: { name: c.name, arguments: c.arguments },
              })),
            }),
          },
          logprobs: null,
          finish_reason: finish,
        },
      ],
      usage: usage(a, completion),
    }),
    streamOpen: (a) =>
      sse(chunk(a, { role: 'assistant', content: plan.kind === 'tools' ? null : '', refusal: null }, null)),
    streamDelta: (a, filler) =>
      plan.kind === 'filler' ? sse(chunk(a, { content: filler }, null)) : render(a, paced.next()),
    streamClose: (a, completion) => render(a, paced.rest()) + close(a, finish, completion),
  };
}

/** The planned `delta` objects, in order. */
function streamEvents(plan: ReplyPlan, slots: number): object[] {
  if (plan.kind === 'text') return pieces(plan.text, slots).map((p) => ({ content: p }));
  if (plan.kind !== 'tools') return [];
  const per = Math.max(1, Math.floor(slots / Math.max(1, plan.calls.length)) - 1);
  return plan.calls.flatMap((c, index) => [
    { tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] },
    ...pieces(c.arguments, per).map((p) => ({ tool_calls: [{ index, function: { arguments: p } }] })),
  ]);
}

function render(a: AnswerInfo, deltas: object[]): string {
  return deltas.map((d) => sse(chunk(a, d, null))).join('');
}

function close(a: AnswerInfo, finish: string, completion: number): string {
  let out = sse(chunk(a, {}, finish));
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
  return `${out}${sse('[DONE]')}`;
}
