import type { AnswerInfo, Dialect } from './dialect.js';
import { fillerText } from './filler-text.js';

/** Stands for the answer's id while a template is built (a control character no real id has). */
const ID_MARK = '\u0001stormlab-answer-id\u0001';
const ID_MARK_JSON = JSON.stringify(ID_MARK).slice(1, -1);
/** Templates kept at most; past it the cache starts over (keys change once a second, with `created`). */
const MAX_TEMPLATES = 512;

const templates = new Map<string, string[]>();
/**
 * The template used last and what it was made for: consecutive answers of a load mostly share
 * one, and comparing seven fields costs less than building and hashing the key.
 */
let last:
  | {
      dialect: Dialect;
      model: string;
      promptTokens: number;
      words: number;
      completion: number;
      created: number;
      includeUsage: boolean;
      parts: string[];
    }
  | undefined;

/**
 * The JSON text of a plain answer (the base dialect's completion of `words` filler words): for
 * all requests with the same dialect, model, token counts and second it is the same text but
 * for its id, so it is serialised once into a template split where the id goes, and each answer
 * is the template joined with its id (ids are `[A-Za-z0-9_-]`, nothing to escape). What the
 * dialect's `completion` gives is what is sent, byte for byte; a body the mark cannot be found
 * in is serialised as before.
 */
export function plainCompletionJson(dialect: Dialect, a: AnswerInfo, words: number, completion: number): string {
  const l = last;
  if (
    l !== undefined &&
    l.dialect === dialect &&
    l.model === a.model &&
    l.promptTokens === a.promptTokens &&
    l.words === words &&
    l.completion === completion &&
    l.created === a.created &&
    l.includeUsage === a.includeUsage
  )
    return join(l.parts, a.id);
  const key = `${dialect.name}\0${a.model}\0${a.promptTokens}\0${words}\0${completion}\0${a.created}\0${a.includeUsage}`;
  let parts = templates.get(key);
  if (parts === undefined) {
    const text = fillerText(0, words);
    parts = JSON.stringify(dialect.completion({ ...a, id: ID_MARK }, text, completion)).split(ID_MARK_JSON);
    if (parts.length < 2) return JSON.stringify(dialect.completion(a, text, completion));
    if (templates.size >= MAX_TEMPLATES) templates.clear();
    templates.set(key, parts);
  }
  const { model, promptTokens, created, includeUsage } = a;
  last = { dialect, model, promptTokens, words, completion, created, includeUsage, parts };
  return join(parts, a.id);
}

function join(parts: string[], id: string): string {
  return parts.length === 2 ? parts[0] + id + parts[1] : parts.join(id);
}

/** Stands for a chunk's text while its template is built. */
const TEXT_MARK = '\u0001stormlab-delta-text\u0001';
const TEXT_MARK_JSON = JSON.stringify(TEXT_MARK).slice(1, -1);

/**
 * A plain stream's content chunk (the base dialect's `streamDelta` for answer `a`), built from a
 * template serialised once per stream: the text goes where the mark was, escaped as JSON
 * escapes it. Null when the chunk does not carry its text once (then chunks are built as before).
 */
export function deltaTemplate(dialect: Dialect, a: AnswerInfo): ((text: string) => string) | null {
  const parts = dialect.streamDelta(a, TEXT_MARK).split(TEXT_MARK_JSON);
  if (parts.length !== 2) return null;
  const [before, after] = parts;
  return (text) => before + JSON.stringify(text).slice(1, -1) + after;
}
