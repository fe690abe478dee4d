import { sseFields } from './sse-splitter.js';
import { EventFlag, readStreamEvent, type StreamEventInfo } from './stream-event.js';

/** Event openings of content deltas: OpenAI chat chunks, Anthropic and Responses text deltas. */
const OPENINGS = [
  'data: {',
  'event: content_block_delta\ndata: {"type":"content_block_delta"',
  'event: response.output_text.delta\ndata: {"type":"response.output_text.delta"',
];

/** Text that makes an OpenAI chunk more than a delta: a finish, a usage, an error. */
const MARKERS = ['"finish_reason":"', '"usage":{', '"error"'];

/** Templates one stream keeps, and how many times it tries to learn one. */
const MAX_TEMPLATES = 4;
const MAX_LEARN_TRIES = 8;

/**
 * The bytes of a plain delta around its text: `prefix` ends with the text's opening quote,
 * `suffix` starts with its closing one and ends with the blank line.
 */
interface Template {
  prefix: string;
  suffix: string;
}

/**
 * Recognises, without parsing, the bulk of a stream once its first token is in: content deltas
 * that say nothing about the stream's state. Parsing every delta would cost the stream guard
 * most of its throughput, and after the first token it needs nothing from a delta but that it
 * is whole. Searches the latin1 text of the bytes (one char per byte; UTF-8 sequences never
 * hold an ASCII byte). Two tests, the exact one first:
 *
 * - **Templates.** A provider writes every delta of a stream the same way but for its text:
 *   `{"id":"…","choices":[{"index":0,"delta":{"content":"<text>"},"finish_reason":null}]}`.
 *   A delta that was parsed (content, nothing else) teaches the bytes around its text; an event
 *   that is those bytes around a valid JSON string body is the same event with other text —
 *   well formed, content, no finish, no usage, no error — with no parse and no scan of the rest.
 * - **Balanced brackets**, for deltas that match no template (a field that changes per event):
 *   one `data:` line (after its `event:` line for Anthropic and the Responses API) holding
 *   `{ … }` with as many closing brackets as opening ones — which a truncated or garbled event
 *   has not — and none of the markers of a finish, a usage or an error (quotes inside JSON
 *   strings are escaped, so no text can look like one). Anything else, a delta whose text holds
 *   an unmatched bracket included, is parsed.
 */
export class PlainDeltas {
  private readonly templates: Template[] = [];
  private tries = 0;
  private text: string | undefined = undefined;
  /** Sorted offsets of markers in `text`. */
  private marks: number[] = [];
  private next = 0;

  test(buf: Uint8Array, text: string, start: number, stop: number): boolean {
    for (let k = 0; k < this.templates.length; k++) {
      const f = fits(this.templates[k], text, start, stop);
      // The shape of a delta around what is not a JSON string: parse it (it is malformed).
      if (f !== Fit.Other) return f === Fit.Yes;
    }
    return this.balanced(buf, text, start, stop);
  }

  /**
   * Learns the template of `text[start..stop)`, an event that was parsed as `info`, when it is a
   * plain content delta whose text can be told apart from the rest (checked by parsing the
   * template around another text).
   */
  learn(text: string, start: number, stop: number, info: StreamEventInfo): void {
    if (info.flags !== EventFlag.Content || this.templates.length >= MAX_TEMPLATES) return;
    if (this.tries >= MAX_LEARN_TRIES) return;
    this.tries++;
    const value = deltaText(info);
    if (value === undefined) return;
    const quoted = Buffer.from(JSON.stringify(value)).toString('latin1');
    const at = text.indexOf(quoted, start);
    if (at < 0 || at + quoted.length > stop) return;
    const t: Template = { prefix: text.slice(start, at + 1), suffix: text.slice(at + quoted.length - 1, stop) };
    // The template around another text must read as the same delta with that text, and nothing else.
    const probe = `${t.prefix}\\u0001${t.suffix}`;
    const seen = readStreamEvent(sseFields(Buffer.from(probe, 'latin1'), probe, 0, probe.length));
    if (seen.flags !== EventFlag.Content || seen.provider !== info.provider || deltaText(seen) !== '\u0001') return;
    this.templates.push(t);
  }

  private balanced(buf: Uint8Array, text: string, start: number, stop: number): boolean {
    if (text !== this.text) this.scan(text);
    // Events come in order: skip marks before this one; one inside it makes it not plain.
    const marks = this.marks;
    while (this.next < marks.length && marks[this.next] < start) this.next++;
    if (this.next < marks.length && marks[this.next] < stop) return false;
    const data = opening(text, start, stop);
    if (data < 0) return false;
    // One line, `{` … `}`, then the blank line.
    const end = stop - 2;
    if (text.charCodeAt(end) !== 0x0a || text.charCodeAt(end + 1) !== 0x0a || text.charCodeAt(end - 1) !== 0x7d)
      return false;
    // Bytes, not chars: a typed-array loop is a few times faster than charCodeAt.
    let curly = 1;
    let square = 0;
    for (let i = data; i < end; i++) {
      const c = buf[i];
      if (c > 0x7d || c < 0x5b) {
        if (c === 0x0a) return false;
      } else if (c === 0x7b) curly++;
      else if (c === 0x7d) curly--;
      else if (c === 0x5b) square++;
      else if (c === 0x5d) square--;
    }
    return curly === 0 && square === 0;
  }

  /** Finds the markers of a chunk's text, once per chunk and only when an event needs them. */
  private scan(text: string): void {
    this.text = text;
    this.next = 0;
    const marks: number[] = [];
    for (const m of MARKERS) for (let i = text.indexOf(m); i >= 0; i = text.indexOf(m, i + 1)) marks.push(i);
    this.marks = marks.length > 1 ? marks.sort((a, b) => a - b) : marks;
  }
}

/** The text of a content delta with one text field: OpenAI chat, Anthropic, Responses API. */
function deltaText(info: StreamEventInfo): string | undefined {
  const o = info.json;
  if (o === undefined) return undefined;
  if (info.provider === 'openai') {
    const choices = o.choices;
    if (!Array.isArray(choices) || choices.length !== 1) return undefined;
    const d = (choices[0] as { delta?: Record<string, unknown> } | null)?.delta;
    return typeof d?.content === 'string' ? d.content : undefined;
  }
  if (info.provider === 'anthropic') {
    const d = o.delta as Record<string, unknown> | undefined;
    const v = d?.type === 'text_delta' ? d.text : d?.type === 'input_json_delta' ? d.partial_json : undefined;
    return typeof v === 'string' ? v : undefined;
  }
  return typeof o.delta === 'string' ? o.delta : undefined;
}

enum Fit {
  /** Not this template's shape. */
  Other,
  /** The template around a valid JSON string body. */
  Yes,
  /** The template around something else. */
  No,
}

/** Whether `text[start..stop)` is `t` around a valid JSON string body. */
function fits(t: Template, text: string, start: number, stop: number): Fit {
  const from = start + t.prefix.length;
  const to = stop - t.suffix.length;
  // A slice compared whole is a memcmp; startsWith(x, at) and charCodeAt loops cost many times more.
  if (to < from || text.slice(start, from) !== t.prefix || text.slice(to, stop) !== t.suffix) return Fit.Other;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x22) return Fit.No;
    if (c === 0x5c) {
      const e = text.charCodeAt(++i);
      if (e === 0x75 /* u */) {
        if (i + 4 >= to || !hex(text, i + 1) || !hex(text, i + 2) || !hex(text, i + 3) || !hex(text, i + 4))
          return Fit.No;
        i += 4;
      } else if (
        !(e === 0x22 || e === 0x5c || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74)
      )
        return Fit.No;
      else if (i >= to) return Fit.No;
    }
  }
  return Fit.Yes;
}

function hex(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

/** The offset just after the opening `{` of a plain delta's data, or −1. */
function opening(text: string, start: number, stop: number): number {
  for (let k = 0; k < OPENINGS.length; k++) {
    const o = OPENINGS[k];
    if (stop - start > o.length && text.slice(start, start + o.length) === o) return start + o.length;
  }
  return -1;
}
