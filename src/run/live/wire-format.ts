import { OUTPUT_TOKENS_HEADER } from '../../upstream/output-tokens-header.js';

/**
 * What the live transport puts on the wire and reads back, per API and per answer shape: the
 * request (path, headers, body) and the few figures an answer is read for (its tokens, whether a
 * stream ended as it should). Bodies are cached as bytes by (model, prompt, max tokens): the same
 * few shapes recur at tens of thousands of requests a second, and encoding them once each is all
 * the per-request work a simulated request needs.
 */

/** Which provider's API a live run speaks. */
export const LIVE_APIS = ['openai', 'anthropic'] as const;
export type LiveApi = (typeof LIVE_APIS)[number];

/** The version header Anthropic's API requires (and the fake upstream recognises Anthropic clients by). */
const ANTHROPIC_VERSION = '2023-06-01';

/** A prompt of `promptTokens` as the fake upstream counts it: ceil(chars / 3) + 4 per message. */
const CHARS_PER_TOKEN = 3;
const MESSAGE_OVERHEAD = 4;
let filler = 'the storm passes when retries stay within their budget and every layer keeps its calm. ';

/** The filler text of a prompt of `promptTokens` (plain words: nothing to escape in JSON). */
function promptText(promptTokens: number): string {
  const chars = Math.max(0, promptTokens - MESSAGE_OVERHEAD) * CHARS_PER_TOKEN;
  while (filler.length < chars) filler += filler;
  return filler.slice(0, chars);
}

/** Bodies kept at most; past it the cache starts over (token counts drawn from a wide distribution). */
const BODY_CACHE = 4096;

/** How requests of one run are written: the path under the target, fixed headers, and the bodies. */
export class WireFormat {
  readonly path: string;
  readonly headers: Record<string, string>;
  private readonly modelJson: string[];
  private readonly bodies = new Map<number, Buffer>();

  constructor(
    readonly api: LiveApi,
    models: readonly string[],
    prefix: string,
    extraHeaders: Readonly<Record<string, string>>,
  ) {
    const base = `${prefix}${prefix.endsWith('/v1') ? '' : '/v1'}`;
    this.path = api === 'anthropic' ? `${base}/messages` : `${base}/chat/completions`;
    // The answer is exactly max_tokens long, as the simulator serves it (a real endpoint ignores the header).
    const own: Record<string, string> = { 'content-type': 'application/json', [OUTPUT_TOKENS_HEADER]: 'max' };
    if (api === 'anthropic') own['anthropic-version'] = ANTHROPIC_VERSION;
    this.headers = { ...own, ...extraHeaders };
    this.modelJson = models.map((m) => JSON.stringify(m));
  }

  /** The body of a request, as bytes (JSON.stringify of the same object, without the escaping scan). */
  body(model: number, promptTokens: number, maxTokens: number, stream: boolean): Buffer {
    const key = ((promptTokens * 0x10000 + maxTokens) * this.modelJson.length + model) * 2 + (stream ? 1 : 0);
    let b = this.bodies.get(key);
    if (b !== undefined) return b;
    const messages = `"messages":[{"role":"user","content":"${promptText(promptTokens)}"}]`;
    const m = this.modelJson[model];
    let text: string;
    if (this.api === 'anthropic')
      text = `{"model":${m},"max_tokens":${maxTokens},${messages}${stream ? ',"stream":true' : ''}}`;
    else
      text = `{"model":${m},${messages},"max_tokens":${maxTokens}${stream ? ',"stream":true,"stream_options":{"include_usage":true}' : ''}}`;
    b = Buffer.from(text, 'latin1');
    if (this.bodies.size >= BODY_CACHE) this.bodies.clear();
    this.bodies.set(key, b);
    return b;
  }
}

/**
 * The integer after the last (or first) `key` in `text`, or -1 (also when it runs to the end of
 * `text`: a stream's next chunk may hold more of its digits). Answers are read for a number or
 * two, so they are picked out of the text where they plainly are instead of parsing the JSON.
 */
export function numberAfter(text: string, key: string, last = true): number {
  const at = last ? text.lastIndexOf(key) : text.indexOf(key);
  if (at < 0) return -1;
  let i = at + key.length;
  while (text.charCodeAt(i) === 32) i++;
  let n = 0;
  let digits = 0;
  for (let c = text.charCodeAt(i); c >= 48 && c <= 57; c = text.charCodeAt(++i), digits++) n = n * 10 + c - 48;
  // Digits up to the end of the text may go on in the next chunk of a stream: not read yet.
  return digits > 0 && i < text.length ? n : -1;
}

/** Tokens a JSON answer's `usage` says were served: OpenAI's `total_tokens`, or Anthropic's input + output. */
export function usageTokens(text: string): number {
  const total = numberAfter(text, '"total_tokens":');
  if (total >= 0) return total;
  const input = numberAfter(text, '"input_tokens":');
  const output = numberAfter(text, '"output_tokens":');
  if (input >= 0 || output >= 0) return Math.max(0, input) + Math.max(0, output);
  // Only `prompt_tokens` + `completion_tokens` (some gateways drop the total).
  return Math.max(0, numberAfter(text, '"prompt_tokens":')) + Math.max(0, numberAfter(text, '"completion_tokens":'));
}

/** Characters of a stream kept between chunks: a marker split across two chunks is still seen. */
const STREAM_TAIL = 512;

/**
 * Reads an SSE answer as it comes, keeping only a short tail: the usage it reports (OpenAI's last
 * chunk with `include_usage`; Anthropic's `message_start` input and `message_delta` output), an
 * error event, whether the answer's finish came, and whether the end marker (`data: [DONE]`,
 * `event: message_stop`) arrived.
 */
export class StreamScan {
  private tail = '';
  total = -1;
  input = -1;
  output = -1;
  ended = false;
  /** The answer's finish came (`finish_reason`, Anthropic's `stop_reason`), whether or not its end marker follows. */
  finished = false;
  errored = false;
  /** A content token has come (text, or a tool call's start). */
  content = false;

  push(chunk: string): void {
    const s = this.tail + chunk;
    if (!this.content) this.content = hasContent(s);
    if (s.includes('{"error":') || s.includes('event: error') || s.includes('"type":"error"')) this.errored = true;
    if (s.includes('[DONE]') || s.includes('event: message_stop')) this.ended = true;
    if (!this.finished) this.finished = s.includes('"finish_reason":"') || s.includes('"stop_reason":"');
    if (this.input < 0) this.input = numberAfter(s, '"input_tokens":', false);
    const out = numberAfter(s, '"output_tokens":');
    if (out >= 0) this.output = out;
    const total = numberAfter(s, '"total_tokens":');
    if (total >= 0) this.total = total;
    this.tail = s.length > STREAM_TAIL ? s.slice(s.length - STREAM_TAIL) : s;
  }

  /** Tokens the stream reported, -1 if none. */
  tokens(): number {
    if (this.total >= 0) return this.total;
    if (this.input >= 0 || this.output >= 0) return Math.max(0, this.input) + Math.max(0, this.output);
    return -1;
  }
}

const CONTENT_KEY = '"content":"';

/** Whether stream text holds a content token: non-empty `delta.content`, a tool call, an Anthropic content delta. */
function hasContent(s: string): boolean {
  if (s.includes('"type":"content_block_delta"') || s.includes('"tool_calls":[{')) return true;
  for (let i = s.indexOf(CONTENT_KEY); i >= 0; i = s.indexOf(CONTENT_KEY, i + 1)) {
    const at = i + CONTENT_KEY.length;
    if (at < s.length && s.charCodeAt(at) !== 0x22) return true;
  }
  return false;
}
