/**
 * A refusal the provider sends as a 2xx answer: the HTTP exchange succeeded, the model did not
 * answer. The classifier calls it `content_filter` (not retried, not failed over by default)
 * instead of a success the caller would take as the answer:
 *   OpenAI chat completions: a choice with `finish_reason: 'content_filter'` (also each
 *                            streamed chunk's choices);
 *   OpenAI Responses API:    `incomplete_details.reason: 'content_filter'`;
 *   Anthropic messages:      `stop_reason: 'refusal'` (a message, or a stream's `message_delta.delta`).
 *
 * Returns the provider's words for it — Anthropic's `stop_details.explanation`, OpenAI's
 * `message.refusal` — or a fixed text naming the field when the provider gives none; undefined
 * when the body is no refusal. A JSON string is parsed only when it names one of the markers,
 * so an ordinary answer costs one substring search.
 */
export function refusalOf(body: unknown): string | undefined {
  if (typeof body === 'string') {
    if (!body.includes('content_filter') && !body.includes('refusal')) return undefined;
    try {
      body = JSON.parse(body) as unknown;
    } catch {
      return undefined;
    }
  }
  if (body === null || typeof body !== 'object') return undefined;
  const o = body as Record<string, unknown>;
  return anthropicRefusal(o) ?? anthropicRefusal(record(o.delta)) ?? openaiChatRefusal(o) ?? responsesRefusal(o);
}

function anthropicRefusal(o: Record<string, unknown> | undefined): string | undefined {
  if (o?.stop_reason !== 'refusal') return undefined;
  return text(record(o.stop_details)?.explanation) ?? 'stop_reason: refusal';
}

function openaiChatRefusal(o: Record<string, unknown>): string | undefined {
  const choices = o.choices;
  if (!Array.isArray(choices)) return undefined;
  for (const c of choices) {
    const choice = record(c);
    if (choice?.finish_reason !== 'content_filter') continue;
    return (
      text(record(choice.message)?.refusal) ?? text(record(choice.delta)?.refusal) ?? 'finish_reason: content_filter'
    );
  }
  return undefined;
}

function responsesRefusal(o: Record<string, unknown>): string | undefined {
  return record(o.incomplete_details)?.reason === 'content_filter'
    ? 'incomplete_details.reason: content_filter'
    : undefined;
}

function record(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
}

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}
