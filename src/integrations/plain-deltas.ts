import { PlainShape, plainJson } from './plain-json.js';
import { sseFields } from './sse-splitter.js';
import { EventFlag, readStreamEvent, type StreamEventInfo, type StreamProvider } from './stream-event.js';

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
  provider: StreamProvider;
}

const SHAPE_OF: Record<StreamProvider, number> = {
  openai: PlainShape.OpenAi,
  anthropic: PlainShape.Anthropic,
  responses: PlainShape.Responses,
};

/**
 * Recognises the bulk of a stream once its first token is in — content deltas that say nothing
 * about the stream's state — without building their JSON. After the first token the stream
 * guard needs nothing from such a delta but that it is whole: its answer for the stream (finish,
 * usage, error, terminal signal, malformed events skipped) is the one a full parse of every event
 * gives, whatever the JSON's spacing, key order or escapes. Two tests, both exact; an event that
 * passes neither is parsed (`readStreamEvent`):
 *
 * - **Templates.** A provider writes every delta of a stream the same way but for its text:
 *   `{"id":"…","choices":[{"index":0,"delta":{"content":"<text>"},"finish_reason":null}]}`.
 *   A delta that was parsed (content, nothing else) teaches the bytes around its text; an event
 *   that is those bytes around a valid JSON string body is the same event with other text —
 *   well formed, content, no finish, no usage, no error — with no parse and no scan of the rest.
 * - **Structure** (`plainJson`), for deltas that match no template (a field that changes per
 *   event): one `data:` line (after an `event:` line for Anthropic and the Responses API) whose
 *   JSON is checked against the whole grammar while the keys of a finish, a usage or an error are
 *   looked for at every depth and in every spacing. Anything it cannot judge — a key written with
 *   escapes, a carriage return, several `data:` lines, a comment — is parsed.
 *
 * Either way the delta must be in the dialect the stream already showed, so skipping it never
 * changes which dialect the guard writes its error event in.
 */
export class PlainDeltas {
  private readonly templates: Template[] = [];
  private tries = 0;

  /** Whether `text[start..stop)`, a whole event of a stream in `provider`'s dialect, is a plain delta. */
  test(buf: Uint8Array, text: string, start: number, stop: number, provider: StreamProvider): boolean {
    for (let k = 0; k < this.templates.length; k++) {
      const t = this.templates[k];
      if (t.provider !== provider) continue;
      const f = fits(t, text, start, stop);
      // The shape of a delta around what is not a JSON string: parse it (it is malformed).
      if (f !== Fit.Other) return f === Fit.Yes;
    }
    const data = dataLine(text, start, stop);
    return data >= 0 && plainJson(buf, text, data, stop - 2) === SHAPE_OF[provider];
  }

  /**
   * Learns the template of `text[start..stop)`, an event that was parsed as `info`, when it is a
   * plain content delta whose text can be told apart from the rest (checked by parsing the
   * template around another text).
   */
  learn(text: string, start: number, stop: number, info: StreamEventInfo): void {
    if (info.flags !== EventFlag.Content || this.templates.length >= MAX_TEMPLATES) return;
    if (this.tries >= MAX_LEARN_TRIES || info.provider === undefined) return;
    this.tries++;
    const value = deltaText(info);
    if (value === undefined) return;
    const quoted = Buffer.from(JSON.stringify(value)).toString('latin1');
    const at = text.indexOf(quoted, start);
    if (at < 0 || at + quoted.length > stop) return;
    const t: Template = {
      prefix: text.slice(start, at + 1),
      suffix: text.slice(at + quoted.length - 1, stop),
      provider: info.provider,
    };
    // The template around another text must read as the same delta with that text, and nothing else.
    const probe = `${t.prefix}\\u0001${t.suffix}`;
    const seen = readStreamEvent(sseFields(Buffer.from(probe, 'latin1'), probe, 0, probe.length));
    if (seen.flags !== EventFlag.Content || seen.provider !== info.provider || deltaText(seen) !== '\u0001') return;
    this.templates.push(t);
  }
}

/**
 * Where the JSON of `text[start..stop)` starts when the event is one `data:` line, after at most
 * an `event:` line, ending in a blank line of two LFs (the data then runs to `stop - 2`); −1 for
 * any other form, which is left to the parser.
 */
function dataLine(text: string, start: number, stop: number): number {
  if (stop - start < 8 || text.charCodeAt(stop - 1) !== 0x0a || text.charCodeAt(stop - 2) !== 0x0a) return -1;
  let line = start;
  if (text.startsWith('event:', start)) {
    line = text.indexOf('\n', start) + 1;
    if (line <= 0 || line >= stop - 2) return -1;
  }
  if (!text.startsWith('data:', line) || text.indexOf('\n', line) !== stop - 2) return -1;
  return line + 5;
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
