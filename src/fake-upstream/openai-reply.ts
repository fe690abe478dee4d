import type { AnswerShape } from './answer-length.js';
import type { AnswerInfo, Dialect } from './dialect.js';
import { fillerText, MAX_FILLER_WORDS } from './filler-text.js';
import { chunk, sse, usage } from './openai-dialect.js';
import { chunkCount, PacedEvents, pieces } from './paced-events.js';
import type { ReplyPlan } from './reply-plan.js';

/** A `delta` and the choice it belongs to. */
interface ChoiceDelta {
  index: number;
  delta: object;
}

/**
 * OpenAI chat completions rendering `plan` in `shape`'s choices: `message.tool_calls` (JSON) or
 * `delta.tool_calls` chunks (the first of each call carries its id and name, the next ones
 * argument pieces), the planned text or filler, and each choice's finish reason (`tool_calls`,
 * `length` when the limit cut it, else `stop`). Choices (`n`) are streamed one after the other,
 * each chunk with its `index`. A plain filler answer of one choice keeps the base dialect as it is.
 */
export function openaiReply(base: Dialect, plan: ReplyPlan, shape: AnswerShape): Dialect {
  const n = shape.tokens.length;
  if (n === 1 && plan.kind === 'filler' && !shape.truncated[0]) return base;
  const finish = (i: number) => (shape.truncated[i] ? 'length' : plan.kind === 'tools' ? 'tool_calls' : 'stop');
  const slots = chunkCount(shape.total);
  // One choice of filler streams the exchange's own text; otherwise the planned deltas are paced.
  const own = n === 1 && plan.kind === 'filler';
  const paced = new PacedEvents(own ? [] : streamEvents(plan, shape, slots), shape.total);
  /** Each choice's filler words, out of the `completion` tokens the model served (in choice order). */
  const words = (completion: number): number[] => {
    let left = completion;
    return shape.tokens.map((t) => {
      const w = Math.min(t, left);
      left -= w;
      return Math.min(w, MAX_FILLER_WORDS);
    });
  };
  const content = (filler: string): string | null =>
    plan.kind === 'tools' ? null : plan.kind === 'text' ? plan.text : filler;
  return {
    ...base,
    completion: (a, filler, completion) => {
      const w = n === 1 ? [] : words(completion);
      return {
        id: a.id,
        object: 'chat.completion',
        created: a.created,
        model: a.model,
        system_fingerprint: 'fp_stormlab',
        choices: shape.tokens.map((_t, index) => ({
          index,
          message: {
            role: 'assistant',
            content: content(n === 1 ? filler : fillerText(0, w[index])),
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
          finish_reason: finish(index),
        })),
        usage: usage(a, completion),
      };
    },
    streamOpen: (a) =>
      shape.tokens
        .map((_t, i) =>
          sse(chunk(a, { role: 'assistant', content: plan.kind === 'tools' ? null : '', refusal: null }, null, i)),
        )
        .join(''),
    streamDelta: (a, filler) => (own ? sse(chunk(a, { content: filler }, null)) : render(a, paced.next())),
    streamClose: (a, completion) => render(a, paced.rest()) + close(a, shape, finish, completion),
  };
}

/** The planned `delta` objects of every choice, in order. */
function streamEvents(plan: ReplyPlan, shape: AnswerShape, slots: number): ChoiceDelta[] {
  const n = shape.tokens.length;
  const per = Math.max(1, Math.floor(slots / n));
  return shape.tokens.flatMap((tokens, index) => choiceEvents(plan, tokens, per).map((delta) => ({ index, delta })));
}

function choiceEvents(plan: ReplyPlan, tokens: number, slots: number): object[] {
  if (plan.kind === 'filler')
    return pieces(fillerText(0, Math.min(tokens, MAX_FILLER_WORDS)), slots).map((p) => ({ content: p }));
  if (plan.kind === 'text') return pieces(plan.text, slots).map((p) => ({ content: p }));
  const per = Math.max(1, Math.floor(slots / Math.max(1, plan.calls.length)) - 1);
  return plan.calls.flatMap((c, index) => [
    { tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] },
    ...pieces(c.arguments, per).map((p) => ({ tool_calls: [{ index, function: { arguments: p } }] })),
  ]);
}

function render(a: AnswerInfo, deltas: ChoiceDelta[]): string {
  return deltas.map((d) => sse(chunk(a, d.delta, null, d.index))).join('');
}

function close(a: AnswerInfo, shape: AnswerShape, finish: (i: number) => string, completion: number): string {
  let out = shape.tokens.map((_t, i) => sse(chunk(a, {}, finish(i), i))).join('');
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
