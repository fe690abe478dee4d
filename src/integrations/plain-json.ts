/**
 * What `plainJson` found in one event's JSON: not a plain delta (parse it), or a plain delta
 * in one of the three shapes — no top-level `type` (an OpenAI chat chunk), `type:
 * "content_block_delta"` (Anthropic), `type: "response.….delta"` (the Responses API).
 */
export const PlainShape = {
  /** Not known to be plain: malformed, or it may carry a finish, a usage or an error. Parse it. */
  No: 0,
  OpenAi: 1,
  Anthropic: 2,
  Responses: 3,
} as const;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** Nesting deeper than this is left to the parser (plain deltas are a few levels deep). */
const MAX_DEPTH = 32;

/** Value kinds the scanner reports: a failure, `null`, a string, anything else. */
const FAIL = 0;
const NULL = 1;
const STRING = 2;
const OTHER = 3;

/**
 * Scans `buf[from..to)` (`text` is `buf` as latin1: one char per byte; the byte at `to` is a
 * line feed, never part of a JSON value) as one JSON value by
 * structure: the whole JSON grammar is checked (strings with their escapes, numbers, literals,
 * nesting), and the keys that make an event more than a delta are found wherever they are and
 * however the JSON is spaced: `finish_reason`, `stop_reason`, `usage` or `error` with any value
 * but `null` makes the event not plain, and so does a top-level `type` that is not a content
 * delta's. A key written with escapes, nesting deeper than `MAX_DEPTH`, a carriage return or a
 * line feed is not judged here either. So `PlainShape.No` means "parse it", and anything else
 * means the event is a well-formed JSON object the full parse (`readStreamEvent`) reads as a
 * content delta or as nothing, with no finish, usage, error or terminal signal — the same
 * answer, with no allocation.
 */
export function plainJson(buf: Uint8Array, text: string, from: number, to: number): number {
  const s = new Scan(buf, text, to);
  s.pos = s.space(from);
  if (buf[s.pos] !== 0x7b /* { */) return PlainShape.No;
  if (s.value(0) === FAIL) return PlainShape.No;
  if (s.space(s.pos) !== to) return PlainShape.No;
  if (s.typeAt < 0) return PlainShape.OpenAi;
  const type = text.slice(s.typeAt, s.typeEnd);
  if (type === 'content_block_delta') return PlainShape.Anthropic;
  if (type.startsWith('response.') && type.endsWith('.delta')) return PlainShape.Responses;
  return PlainShape.No;
}

class Scan {
  pos = 0;
  /** The top-level `type` string's body (without quotes), −1 when there is none. */
  typeAt = -1;
  typeEnd = -1;
  /** The body of the last string read. */
  private strAt = 0;
  private strEnd = 0;

  constructor(
    private readonly buf: Uint8Array,
    private readonly text: string,
    private readonly end: number,
  ) {}

  /** The first offset at or after `i` that is not JSON whitespace allowed on one line (space, tab). */
  space(i: number): number {
    const b = this.buf;
    while (i < this.end && (b[i] === 0x20 || b[i] === 0x09)) i++;
    return i;
  }

  value(depth: number): number {
    const b = this.buf;
    const c = b[this.pos];
    if (c === QUOTE) return this.string() ? STRING : FAIL;
    if (c === 0x7b) return depth >= MAX_DEPTH ? FAIL : this.object(depth + 1);
    if (c === 0x5b) return depth >= MAX_DEPTH ? FAIL : this.array(depth + 1);
    if (c === 0x6e) return this.literal('null') ? NULL : FAIL;
    if (c === 0x74) return this.literal('true') ? OTHER : FAIL;
    if (c === 0x66) return this.literal('false') ? OTHER : FAIL;
    return this.number() ? OTHER : FAIL;
  }

  private object(depth: number): number {
    const b = this.buf;
    this.pos = this.space(this.pos + 1);
    if (b[this.pos] === 0x7d) {
      this.pos++;
      return OTHER;
    }
    for (;;) {
      if (b[this.pos] !== QUOTE) return FAIL;
      const keyAt = this.pos + 1;
      // A key written with escapes may spell a watched one: the parser decides.
      if (!this.string() || this.strAt < 0) return FAIL;
      const keyEnd = this.pos - 1;
      this.pos = this.space(this.pos);
      if (b[this.pos] !== 0x3a /* : */) return FAIL;
      this.pos = this.space(this.pos + 1);
      const watch = this.watched(keyAt, keyEnd);
      const v = this.value(depth);
      if (v === FAIL) return FAIL;
      if (watch === WATCH_NON_NULL && v !== NULL) return FAIL;
      if (watch === WATCH_TYPE && depth === 1) {
        // A second top-level `type`, one that is not a string or one written with escapes: the parser decides.
        if (this.typeAt >= 0 || v !== STRING || this.strAt < 0) return FAIL;
        this.typeAt = this.strAt;
        this.typeEnd = this.strEnd;
      }
      this.pos = this.space(this.pos);
      const c = b[this.pos];
      if (c === 0x7d) {
        this.pos++;
        return OTHER;
      }
      if (c !== 0x2c /* , */) return FAIL;
      this.pos = this.space(this.pos + 1);
    }
  }

  private array(depth: number): number {
    const b = this.buf;
    this.pos = this.space(this.pos + 1);
    if (b[this.pos] === 0x5d) {
      this.pos++;
      return OTHER;
    }
    for (;;) {
      if (this.value(depth) === FAIL) return FAIL;
      this.pos = this.space(this.pos);
      const c = b[this.pos];
      if (c === 0x5d) {
        this.pos++;
        return OTHER;
      }
      if (c !== 0x2c) return FAIL;
      this.pos = this.space(this.pos + 1);
    }
  }

  /** What a key (written without escapes) asks of its value: nothing, not-null (a finish, usage or error), or to be the `type`. */
  private watched(at: number, end: number): number {
    const n = end - at;
    if (n !== 4 && n !== 5 && n !== 11 && n !== 13) return WATCH_NONE;
    const key = this.text.slice(at, end);
    if (key === 'type') return WATCH_TYPE;
    if (key === 'usage' || key === 'error' || key === 'stop_reason' || key === 'finish_reason') return WATCH_NON_NULL;
    return WATCH_NONE;
  }

  /** A JSON string from the opening quote at `pos`; `pos` ends after its closing quote. */
  private string(): boolean {
    const b = this.buf;
    const end = this.end;
    let i = this.pos + 1;
    this.strAt = i;
    let escaped = false;
    for (; i < end; i++) {
      const c = b[i];
      if (c === QUOTE) {
        this.strEnd = i;
        this.pos = i + 1;
        // A key or a type written with escapes is not compared byte for byte.
        if (escaped) this.strEnd = this.strAt = -1;
        return true;
      }
      if (c < 0x20) return false;
      if (c === BACKSLASH) {
        escaped = true;
        const e = b[++i];
        if (e === 0x75 /* u */) {
          if (i + 4 >= end || !hex(b[i + 1]) || !hex(b[i + 2]) || !hex(b[i + 3]) || !hex(b[i + 4])) return false;
          i += 4;
        } else if (
          !(
            e === QUOTE ||
            e === BACKSLASH ||
            e === 0x2f ||
            e === 0x62 ||
            e === 0x66 ||
            e === 0x6e ||
            e === 0x72 ||
            e === 0x74
          )
        )
          return false;
      }
    }
    return false;
  }

  private literal(word: string): boolean {
    const at = this.pos;
    if (at + word.length > this.end || this.text.slice(at, at + word.length) !== word) return false;
    this.pos = at + word.length;
    return true;
  }

  /** `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` */
  private number(): boolean {
    const b = this.buf;
    const end = this.end;
    let i = this.pos;
    if (b[i] === 0x2d) i++;
    if (i >= end) return false;
    if (b[i] === 0x30) i++;
    else if (b[i] >= 0x31 && b[i] <= 0x39) while (i < end && digit(b[i])) i++;
    else return false;
    if (i < end && b[i] === 0x2e) {
      i++;
      if (i >= end || !digit(b[i])) return false;
      while (i < end && digit(b[i])) i++;
    }
    if (i < end && (b[i] === 0x65 || b[i] === 0x45)) {
      i++;
      if (i < end && (b[i] === 0x2b || b[i] === 0x2d)) i++;
      if (i >= end || !digit(b[i])) return false;
      while (i < end && digit(b[i])) i++;
    }
    this.pos = i;
    return true;
  }
}

const WATCH_NONE = 0;
const WATCH_NON_NULL = 1;
const WATCH_TYPE = 2;

function digit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function hex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}
