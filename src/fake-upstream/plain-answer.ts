import type { AnswerInfo, Dialect } from './dialect.js';
import { fillerText, MAX_FILLER_WORDS } from './filler-text.js';

/** Stands for the answer's id while a template is built (a control character no real id has). */
const ID_MARK = '\u0001stormlab-answer-id\u0001';
const ID_MARK_JSON = JSON.stringify(ID_MARK).slice(1, -1);
/** Stands for a chunk's text while its template is built. */
const TEXT_MARK = '\u0001stormlab-delta-text\u0001';
const TEXT_MARK_JSON = JSON.stringify(TEXT_MARK).slice(1, -1);
/** Templates kept at most; past it the cache starts over (keys change once a second, with `created`). */
const MAX_TEMPLATES = 512;

/** What a template is of (an index into `Templates.last`). */
const Part = { Completion: 0, Open: 1, Close: 2, Delta: 3 } as const;
type Part = (typeof Part)[keyof typeof Part];

/** A template: the text split where the id goes (null: the text does not carry the id, it is made each time). */
type Parts = string[] | null;

/**
 * Texts of plain answers that are the same for every answer with the same dialect, model, token
 * counts and second but for the answer's id: each is made once with a mark for the id, split
 * there, and joined with each answer's id (ids are `[A-Za-z0-9_-]`, nothing to escape). What the
 * dialect gives is what is sent, byte for byte; a text the mark cannot be found in is made as
 * before. The template of each part used last is checked field by field first: consecutive
 * answers of a load mostly share one, and comparing costs less than building and hashing the key.
 */
class Templates {
  /** Per dialect object (two dialects may share a name, not their texts). */
  private readonly maps = new WeakMap<Dialect, Map<string, Parts>>();
  /** The template used last, per part (a stream takes three in turn). */
  private readonly last: Array<
    | {
        dialect: Dialect;
        model: string;
        promptTokens: number;
        created: number;
        includeUsage: boolean;
        n: number;
        m: number;
        parts: Parts;
      }
    | undefined
  > = [undefined, undefined, undefined, undefined];

  /** The template of `part` for answer `a` (`n`, `m`: the part's counts), made by `make` when new. */
  get(part: Part, dialect: Dialect, a: AnswerInfo, n: number, m: number, make: (a: AnswerInfo) => string): Parts {
    const l = this.last[part];
    if (
      l !== undefined &&
      l.dialect === dialect &&
      l.model === a.model &&
      l.promptTokens === a.promptTokens &&
      l.n === n &&
      l.m === m &&
      l.created === a.created &&
      l.includeUsage === a.includeUsage
    )
      return l.parts;
    let map = this.maps.get(dialect);
    if (map === undefined) this.maps.set(dialect, (map = new Map()));
    const key = `${part}\0${a.model}\0${a.promptTokens}\0${n}\0${m}\0${a.created}\0${a.includeUsage}`;
    let parts = map.get(key);
    if (parts === undefined) {
      const split = make({ ...a, id: ID_MARK }).split(ID_MARK_JSON);
      parts = split.length < 2 ? null : split;
      if (map.size >= MAX_TEMPLATES) map.clear();
      map.set(key, parts);
    }
    const { model, promptTokens, created, includeUsage } = a;
    this.last[part] = { dialect, model, promptTokens, created, includeUsage, n, m, parts };
    return parts;
  }

  /** The text of `part` for answer `a`: its template joined with the id, or made anew. */
  text(part: Part, dialect: Dialect, a: AnswerInfo, n: number, m: number, make: (a: AnswerInfo) => string): string {
    const parts = this.get(part, dialect, a, n, m, make);
    return parts === null ? make(a) : join(parts, a.id);
  }
}

const templates = new Templates();

function join(parts: string[], id: string): string {
  return parts.length === 2 ? parts[0] + id + parts[1] : parts.join(id);
}

/** The JSON text of a plain answer: the base dialect's completion of `words` filler words. */
export function plainCompletionJson(dialect: Dialect, a: AnswerInfo, words: number, completion: number): string {
  return templates.text(Part.Completion, dialect, a, words, completion, (t) =>
    JSON.stringify(dialect.completion(t, fillerText(0, words), completion)),
  );
}

/** The opening events of a plain stream (the base dialect's `streamOpen`). */
export function plainStreamOpen(dialect: Dialect, a: AnswerInfo): string {
  return templates.text(Part.Open, dialect, a, 0, 0, (t) => dialect.streamOpen(t));
}

/** The closing events of a plain stream of `completion` tokens (the base dialect's `streamClose`). */
export function plainStreamClose(dialect: Dialect, a: AnswerInfo, completion: number): string {
  return templates.text(Part.Close, dialect, a, completion, 0, (t) => dialect.streamClose(t, completion));
}

/**
 * A plain stream's content chunk (the base dialect's `streamDelta` for answer `a`), built from a
 * template: the text goes where the mark was, escaped as JSON escapes it. Null when the chunk
 * does not carry its text once (then chunks are built as before).
 */
export function deltaTemplate(dialect: Dialect, a: AnswerInfo): ((text: string) => string) | null {
  const make = (t: AnswerInfo) => dialect.streamDelta(t, TEXT_MARK);
  const withId = templates.get(Part.Delta, dialect, a, 0, 0, make);
  const parts = (withId === null ? make(a) : join(withId, a.id)).split(TEXT_MARK_JSON);
  if (parts.length !== 2) return null;
  const [before, after] = parts;
  return (text) => before + jsonEscaped(text) + after;
}

/** What JSON.stringify escapes in a string: quotes, backslashes, control characters and (lone) surrogates. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** `text` as it reads inside a JSON string (filler text, plain words, needs nothing). */
function jsonEscaped(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text).slice(1, -1) : text;
}

/** Whether each dialect's plain answers are ASCII but for what the request names (its model). */
const asciiDialects = new WeakMap<Dialect, boolean>();
let lastModel = '';
let lastModelAscii = true;

/**
 * Whether every text of plain answer `a` in `dialect` — its completion, or its stream's opening,
 * chunks and close — is ASCII, and so can be written as `latin1`: the same bytes as UTF-8,
 * copied as they are, where `utf8` makes Node measure and encode each character (for a stream
 * of a few KB, more than the rest of its write). Such a text is the dialect's own words, filler
 * words, numbers, the answer's id (the dialect's prefix and `[a-z0-9]`) and the model's name:
 * the dialect is checked once, on a sample answer, and the name each time (the last one
 * remembered).
 */
export function plainAnswerAscii(dialect: Dialect, a: AnswerInfo): boolean {
  let ascii = asciiDialects.get(dialect);
  if (ascii === undefined) {
    const sample: AnswerInfo = { id: 'x', model: 'm', created: 0, promptTokens: 1, includeUsage: true };
    const words = fillerText(0, 64);
    const texts = [
      JSON.stringify(dialect.completion(sample, words, 64)),
      dialect.streamOpen(sample),
      dialect.streamDelta(sample, words),
      dialect.streamClose(sample, 64),
    ];
    ascii = texts.every(isAscii) && isAscii(fillerText(0, MAX_FILLER_WORDS));
    asciiDialects.set(dialect, ascii);
  }
  if (!ascii) return false;
  if (a.model !== lastModel) {
    lastModel = a.model;
    lastModelAscii = isAscii(a.model);
  }
  return lastModelAscii;
}

function isAscii(text: string): boolean {
  return Buffer.byteLength(text) === text.length;
}
