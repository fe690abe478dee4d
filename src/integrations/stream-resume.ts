import { StreamError } from '../engine/errors.js';
import { SseSplitter, sseFields } from './sse-splitter.js';
import type { StreamProvider } from './stream-event.js';

/** The field a resumed answer's last usage carrier (the usage chunk, or `message_delta`) gains. */
const RESUME_FIELD = 'stormlab_resume';

/** What `stormlab_resume` says. */
export interface ResumeMark {
  /** How many times the answer was continued. */
  resumptions: number;
  /**
   * Tokens of the delivered text sent back as the prefill (estimated as the engine estimates
   * prompts): the resumptions' cost, part of `usage.prompt_tokens` (`input_tokens`).
   */
  prefill_tokens: number;
}

/**
 * A committed stream that broke, being continued: what its caller already has (`text`), the
 * break the caller sees should no continuation come, and how the next attempts are asked and
 * their streams spliced in.
 */
export interface Resumption {
  provider: 'openai' | 'anthropic';
  /** All the text the caller has been delivered, the prefill of the next attempt. */
  text: string;
  /** The original break: the in-band error the caller gets when no continuation comes. */
  error: unknown;
  /** Resumptions so far (this one included). */
  count: number;
  /** Prefill tokens sent so far (every resumption's). */
  prefillTokens: number;
  /** Completion tokens delivered before the last break (the broken attempts' usage, or the estimate). */
  deliveredTokens: number;
  /** Whether the caller asked for a usage chunk (`stream_options.include_usage`), where the mark goes. */
  usageChunk: boolean;
}

/** Whether a stream break is one a continuation can follow: a cut or a stall, not a provider's error event. */
export function resumable(error: unknown): error is StreamError {
  return error instanceof StreamError && (error.kind === 'stream_cut' || error.kind === 'stream_stall');
}

/**
 * The request asking for the rest of the answer: the caller's body with the delivered text as a
 * trailing assistant message (the shape both OpenAI chat completions and Anthropic messages
 * take), or undefined when the body has no `messages` list to extend.
 */
export function prefillBody(json: unknown, text: string): Record<string, unknown> | undefined {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return undefined;
  const body = json as Record<string, unknown>;
  if (!Array.isArray(body.messages)) return undefined;
  return { ...body, messages: [...body.messages, { role: 'assistant', content: text }] };
}

/**
 * Reads the events a caller is handed (whole events, as the stream gate passes them) to keep
 * the text it got, and, on a continuation, splices the continuation in: its opening (OpenAI's
 * role chunk; Anthropic's `message_start` and the text block's `content_block_start`) is dropped
 * — the caller's stream has it already — and its last usage carrier gets `stormlab_resume` and
 * the usage the answer had before the break. `textOnly` turns false at anything a prefill cannot
 * carry (tool-call arguments, reasoning, a refusal, a second choice or block): such a stream is
 * never continued.
 */
export class ResumeTap {
  text = '';
  textOnly = true;
  /** Completion tokens the stream reported (its usage), when it did. */
  reported = -1;
  private readonly splitter = new SseSplitter();

  constructor(
    private readonly provider: StreamProvider,
    /** A continuation: what to splice it with (undefined: the first attempt, read only). */
    private readonly splice?: Resumption,
  ) {
    if (provider === 'responses') this.textOnly = false;
  }

  /** The events handed to the caller; returns what the caller gets (the same bytes, unless splicing). */
  pass(parts: Uint8Array[]): Uint8Array[] {
    if (parts.length === 0) return parts;
    const out: Uint8Array[] = [];
    for (const part of parts) {
      const kept: Array<[number, number] | Buffer> = [];
      const { buf } = this.splitter.push(part, (b, text, start, stop) => {
        const e = sseFields(b, text, start, stop);
        const json = parse(e.data);
        const verdict = this.read(e.event, e.data, json);
        if (verdict === KEEP) kept.push([start, stop]);
        else if (verdict === MARK) kept.push(this.marked(e.event, json!));
      });
      if (this.splice === undefined) {
        out.push(part);
        continue;
      }
      for (const k of kept) out.push(Array.isArray(k) ? buf.subarray(k[0], k[1]) : k);
    }
    return out;
  }

  /** What to do with one event: keep it, drop it (a continuation's opening), or mark it (its last usage). */
  private read(event: string | undefined, data: string | undefined, json: Record<string, unknown> | undefined): number {
    if (json === undefined) return data === undefined && event === undefined ? DROP : KEEP;
    const splicing = this.splice !== undefined;
    if (this.provider === 'anthropic') {
      const type = json.type ?? event;
      if (type === 'message_start') return splicing ? DROP : KEEP;
      if (type === 'content_block_start') {
        const block = json.content_block as Record<string, unknown> | undefined;
        if (block?.type !== 'text' || json.index !== 0) this.textOnly = false;
        return splicing ? DROP : KEEP;
      }
      if (type === 'content_block_delta') {
        const delta = json.delta as Record<string, unknown> | undefined;
        if (delta?.type === 'text_delta' && typeof delta.text === 'string' && json.index === 0) this.text += delta.text;
        else this.textOnly = false;
        return KEEP;
      }
      if (type === 'message_delta') {
        const out = (json.usage as Record<string, unknown> | undefined)?.output_tokens;
        if (typeof out === 'number') this.reported = out;
        return splicing ? MARK : KEEP;
      }
      return KEEP;
    }
    const choices = json.choices;
    const usage = json.usage as Record<string, unknown> | undefined;
    if (usage !== undefined && usage !== null && typeof usage.completion_tokens === 'number')
      this.reported = usage.completion_tokens;
    if (!Array.isArray(choices)) return KEEP;
    if (choices.length === 0) return splicing && usage != null ? MARK : KEEP;
    const c = choices[0] as Record<string, unknown>;
    if (choices.length > 1 || (c.index ?? 0) !== 0) this.textOnly = false;
    const delta = (c.delta ?? {}) as Record<string, unknown>;
    if (delta.tool_calls !== undefined || delta.function_call !== undefined) this.textOnly = false;
    if (typeof delta.refusal === 'string' || typeof delta.reasoning_content === 'string') this.textOnly = false;
    if (typeof delta.reasoning === 'string') this.textOnly = false;
    const content = typeof delta.content === 'string' ? delta.content : '';
    this.text += content;
    const finish = c.finish_reason !== undefined && c.finish_reason !== null;
    // The continuation's role chunk: the caller's stream opened with one already.
    if (splicing && delta.role !== undefined && content === '' && !finish) return DROP;
    if (splicing && finish && !this.splice!.usageChunk) return MARK;
    return KEEP;
  }

  /** The event with `stormlab_resume` and the usage summed over the answer's attempts. */
  private marked(event: string | undefined, json: Record<string, unknown>): Buffer {
    const s = this.splice!;
    const mark: ResumeMark = { resumptions: s.count, prefill_tokens: s.prefillTokens };
    const usage = json.usage as Record<string, number> | undefined;
    const sum =
      usage === undefined || usage === null
        ? undefined
        : this.provider === 'anthropic'
          ? { ...usage, output_tokens: (usage.output_tokens ?? 0) + s.deliveredTokens }
          : {
              ...usage,
              completion_tokens: (usage.completion_tokens ?? 0) + s.deliveredTokens,
              total_tokens: (usage.total_tokens ?? 0) + s.deliveredTokens,
            };
    const out = { ...json, ...(sum === undefined ? {} : { usage: sum }), [RESUME_FIELD]: mark };
    const head = event === undefined ? '' : `event: ${event}\n`;
    return Buffer.from(`${head}data: ${JSON.stringify(out)}\n\n`);
  }
}

const KEEP = 0;
const DROP = 1;
const MARK = 2;

function parse(data: string | undefined): Record<string, unknown> | undefined {
  if (data === undefined || data === '[DONE]') return undefined;
  try {
    const v: unknown = JSON.parse(data);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
