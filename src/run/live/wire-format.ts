import { EventFlag } from '../../engine/stream-guard.js';
import { PlainDeltas } from '../../integrations/plain-deltas.js';
import { SseUsage, usageFromBody } from '../../integrations/response-usage.js';
import { SseSplitter, sseFields } from '../../integrations/sse-splitter.js';
import { readStreamEvent, type StreamProvider } from '../../integrations/stream-event.js';
import { OUTPUT_TOKENS_HEADER } from '../../upstream/output-tokens-header.js';

/**
 * What the live transport puts on the wire and reads back, per API and per answer shape: the
 * request (path, headers, body) and the few figures an answer is read for (its tokens, whether a
 * stream ended as it should), read by structure. Bodies are cached as bytes by (model, prompt, max tokens): the same
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

/** Tokens a JSON answer's `usage` says were served (its structure, `usageOf`: OpenAI's `total_tokens` or prompt + completion, Anthropic's input + output), 0 if none. */
export function usageTokens(text: string): number {
  return usageFromBody(text) ?? 0;
}

/**
 * Reads an SSE answer as it comes, event by event and by structure (the stream guard's own
 * reader: `SseSplitter`, `readStreamEvent`, its exact fast path for plain deltas, `SseUsage`),
 * whatever the JSON's spacing, key order or escapes and however the bytes are split: the usage
 * it reports (OpenAI's last chunk with `include_usage`; Anthropic's `message_start` input and
 * `message_delta` output), whether a content delta came, whether the answer's finish came,
 * and how it ended — its end marker (`[DONE]`, `message_stop`) or an error event, after which
 * nothing more is read. Malformed events are skipped.
 */
export class StreamScan {
  private readonly splitter = new SseSplitter();
  private readonly plain = new PlainDeltas();
  private readonly usage = new SseUsage();
  private provider: StreamProvider;
  ended = false;
  /** The answer's finish came (`finish_reason`, Anthropic's `stop_reason`, a usage chunk), whether or not its end marker follows. */
  finished = false;
  errored = false;
  /** A content delta has come (text, a tool call's arguments, reasoning). */
  content = false;

  constructor(api: LiveApi) {
    this.provider = api === 'anthropic' ? 'anthropic' : 'openai';
  }

  push(chunk: Uint8Array): void {
    if (this.ended || this.errored) return;
    this.splitter.push(chunk, (b, text, start, stop) => {
      if (this.ended || this.errored) return;
      // After the first token a plain delta says nothing more (see PlainDeltas): no parse.
      if (this.content && this.plain.test(b, text, start, stop, this.provider)) return;
      const info = readStreamEvent(sseFields(b, text, start, stop));
      const f = info.flags;
      if (info.provider !== undefined) this.provider = info.provider;
      if (f & EventFlag.Malformed) return;
      if (info.json !== undefined) this.usage.observe(info.json);
      if (f === EventFlag.Content) this.plain.learn(text, start, stop, info);
      if (f & EventFlag.Content) this.content = true;
      if (f & EventFlag.Finish) this.finished = true;
      if (f & EventFlag.Error) this.errored = true;
      else if (f & EventFlag.Terminal) this.ended = true;
    });
  }

  /** Tokens the stream reported, -1 if none. */
  tokens(): number {
    return this.usage.total() ?? -1;
  }
}
