import { MAX_EVENT_BYTES, SseSplitter, sseFields } from './sse-splitter.js';

const EMPTY = Buffer.alloc(0);
/** Searched for in place of `"usage"`, which a byte search finds many times slower (a quote starts every JSON string). */
const USAGE_WORD = Buffer.from('usage');
const ESCAPE = Buffer.from('\\u');
const LF_LF = Buffer.from('\n\n');
const LF_CRLF = Buffer.from('\n\r\n');
const CR = 0x0d;
const LF = 0x0a;

/**
 * Tokens an LLM answer says it used, for reconciling a reservation:
 *   OpenAI chat/completions: usage.total_tokens, or prompt_tokens + completion_tokens
 *   OpenAI Responses API:    usage.total_tokens, or input_tokens + output_tokens
 *   Anthropic messages:      usage.input_tokens + usage.output_tokens
 * Undefined when the answer carries no usable usage.
 */
export function usageOf(json: unknown): number | undefined {
  if (json === null || typeof json !== 'object') return undefined;
  const u = (json as { usage?: unknown }).usage;
  if (u === null || typeof u !== 'object') return undefined;
  const { total_tokens, prompt_tokens, completion_tokens, input_tokens, output_tokens } = u as Record<string, unknown>;
  if (isCount(total_tokens)) return total_tokens;
  if (isCount(prompt_tokens) || isCount(completion_tokens)) return count(prompt_tokens) + count(completion_tokens);
  if (isCount(input_tokens) || isCount(output_tokens)) return count(input_tokens) + count(output_tokens);
  return undefined;
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && v >= 0 && v < Infinity;
}

function count(v: unknown): number {
  return isCount(v) ? v : 0;
}

const decoder = new TextDecoder();

/** Larger answers are not parsed for usage: their reservation stays as it was (the estimate). */
const MAX_USAGE_BYTES = 16 * 1024 * 1024;

/** `usageOf` a JSON response body given as bytes; skips the parse when "usage" is not in it. */
export function usageFromBody(body: Uint8Array | string): number | undefined {
  if (body.length === 0 || body.length > MAX_USAGE_BYTES) return undefined;
  const text = typeof body === 'string' ? body : decoder.decode(body);
  if (!mayHoldUsage(text)) return undefined;
  try {
    return usageOf(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/**
 * Whether `text` may hold a `usage` key: literally, or spelt with a `\\u` escape (JSON lets a
 * key be written so). Text without either cannot, so it needs no parse.
 */
function mayHoldUsage(text: string): boolean {
  return text.includes('"usage"') || text.includes('\\u');
}

/**
 * `mayHoldUsage` for the events of one chunk's text, met in order: each marker is searched for
 * once per chunk (the next one kept), not once per event.
 */
class UsageMarks {
  private text = '';
  private usageAt = -1;
  private escapeAt = -1;

  within(text: string, start: number, end: number): boolean {
    if (text !== this.text) {
      this.text = text;
      this.usageAt = text.indexOf('"usage"');
      this.escapeAt = text.indexOf('\\u');
    }
    if (this.usageAt >= 0 && this.usageAt < start) this.usageAt = text.indexOf('"usage"', start);
    if (this.escapeAt >= 0 && this.escapeAt < start) this.escapeAt = text.indexOf('\\u', start);
    return (this.usageAt >= 0 && this.usageAt < end) || (this.escapeAt >= 0 && this.escapeAt < end);
  }
}

/** `mayHoldUsage` on bytes: the word `usage` or a `\\u` escape. */
function mayHoldBytes(b: Buffer): boolean {
  return b.indexOf(USAGE_WORD) >= 0 || b.indexOf(ESCAPE) >= 0;
}

/** The bytes around the seam of `a` then `b` that a marker crossing it would lie in. */
function junction(a: Buffer, b: Buffer): Buffer {
  const k = USAGE_WORD.length - 1;
  return Buffer.concat([a.subarray(Math.max(0, a.length - k)), b.subarray(0, k)]);
}

/**
 * Where the last event ending in `b` ends (0: none does): after a line feed followed by a blank
 * line, LF or CRLF — where `SseSplitter` ends one.
 */
function lastEventEnd(b: Buffer): number {
  const lf = b.lastIndexOf(LF_LF);
  const crlf = b.indexOf(CR) < 0 ? -1 : b.lastIndexOf(LF_CRLF);
  return Math.max(lf < 0 ? 0 : lf + 2, crlf < 0 ? 0 : crlf + 3);
}

/** Where in `b` an event ends whose end starts in `a` (the seam splits `\n\n` or `\n\r\n`); 0 when none does. */
function eventEndAcross(a: Buffer, b: Buffer): number {
  const last = a[a.length - 1];
  if (last === LF && b[0] === LF) return 1;
  if (last === LF && b[0] === CR && b[1] === LF) return 2;
  if (last === CR && a[a.length - 2] === LF && b[0] === LF) return 1;
  return 0;
}

/**
 * Follows usage through a server-sent event stream, chunk by chunk, event by event
 * (`SseSplitter`: LF or CRLF, comments, several `data:` lines): an event that may hold a usage
 * is parsed and read by structure (`observe`):
 * - OpenAI: the final chunk with `usage` (sent with `stream_options.include_usage`);
 * - Anthropic: `message_start.message.usage.input_tokens`, then the cumulative
 *   `message_delta.usage.output_tokens`;
 * - the Responses API: `response.completed`'s `response.usage`.
 *
 * Most of a stream is content deltas none of which can hold a usage: a chunk (with the event
 * it finishes) in which neither the word `usage` nor a `\u` escape occurs is not split into events at
 * all — only where its last event ends is found (a line feed followed by a blank line, LF or
 * CRLF, as the splitter ends one), on the bytes, and the event not ended yet is kept for the
 * next chunk. A chunk that may hold one goes through the splitter from that event's start.
 */
export class SseUsage {
  /** The bytes of the event not ended yet: from an event boundary to the end of the last chunk. */
  private pending: Buffer = EMPTY;
  /** Whether `pending` may hold a usage (then the next chunk is split whatever it holds). */
  private pendingMayHold = false;
  private readonly marks = new UsageMarks();
  private openai: number | undefined = undefined;
  private input: number | undefined = undefined;
  private output: number | undefined = undefined;

  push(chunk: Uint8Array): void {
    const c = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const p = this.pending;
    if (this.pendingMayHold || mayHoldBytes(c) || (p.length > 0 && mayHoldBytes(junction(p, c)))) {
      this.split(p.length === 0 ? c : Buffer.concat([p, c]));
      return;
    }
    // No event here can hold a usage: keep only the one not ended yet, without copying the chunk.
    const end = lastEventEnd(c);
    if (end > 0) this.pending = c.subarray(end);
    else {
      const across = p.length === 0 ? 0 : eventEndAcross(p, c);
      this.pending = across > 0 ? c.subarray(across) : p.length === 0 ? c : Buffer.concat([p, c]);
    }
    // As the splitter bounds an event that never ends.
    if (this.pending.length > MAX_EVENT_BYTES) this.pending = EMPTY;
  }

  /** `buf` (from an event's start) read event by event; the event not ended yet kept. */
  private split(buf: Buffer): void {
    const splitter = new SseSplitter();
    splitter.push(buf, (b, text, start, end) => {
      if (this.marks.within(text, start, end)) this.event(sseFields(b, text, start, end).data);
    });
    this.pending = splitter.rest();
    this.pendingMayHold = mayHoldBytes(this.pending);
  }

  /** Tokens reported so far (all of them once the stream has ended), or undefined. */
  total(): number | undefined {
    const rest = this.pending;
    if (rest.length > 0) {
      const text = rest.toString('latin1');
      if (mayHoldUsage(text)) this.event(sseFields(rest, text, 0, rest.length).data);
    }
    if (this.openai !== undefined) return this.openai;
    if (this.input === undefined && this.output === undefined) return undefined;
    return (this.input ?? 0) + (this.output ?? 0);
  }

  private event(data: string | undefined): void {
    if (data === undefined || data === '') return;
    let event: unknown;
    try {
      event = JSON.parse(data);
    } catch {
      return;
    }
    if (event !== null && typeof event === 'object') this.observe(event as Record<string, unknown>);
  }

  /** Reads the usage of one event already parsed (the stream guard parses every event once). */
  observe(event: Record<string, unknown>): void {
    if (event.type === 'message_start') {
      const u = (event.message as { usage?: Record<string, unknown> } | undefined)?.usage;
      if (u && isCount(u.input_tokens)) this.input = u.input_tokens;
      if (u && isCount(u.output_tokens)) this.output = u.output_tokens;
      return;
    }
    if (event.type === 'message_delta') {
      const u = event.usage as Record<string, unknown> | undefined;
      if (u && isCount(u.input_tokens)) this.input = u.input_tokens;
      if (u && isCount(u.output_tokens)) this.output = u.output_tokens;
      return;
    }
    if (event.type === 'response.completed' || event.type === 'response.incomplete') {
      const n = usageOf(event.response);
      if (n !== undefined) this.openai = n;
      return;
    }
    if (event.usage === undefined || event.usage === null) return;
    const n = usageOf(event);
    if (n !== undefined) this.openai = n;
  }
}
