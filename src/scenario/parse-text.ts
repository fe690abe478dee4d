import type { Document, LineCounter } from 'yaml';
import { parseYamlDocument } from './yaml-document.js';
import { yaml } from './yaml-module.js';

export type ParsedText = { ok: true; doc: unknown } | { ok: false; problems: string[] };
export type TextFormat = 'yaml' | 'json';

/** A problem at a place in the text: `3:7: YAML syntax error: ...` (line:column, from 1). */
function at(line: number, col: number, message: string): string {
  return `${line}:${col}: ${message}`;
}

/** Inside `{ }`, YAML reads `[*]` as a list holding an alias: such keys must be quoted. */
const STAR_HINT = ' (inside { }, quote keys that hold [*], like "layers[*].retry")';

const EMPTY = 'the file is empty (expected a scenario with name, duration, arrival, tokens, layers and upstream)';

/** Parses a scenario file's text; syntax errors (all of them, for YAML) come back as problems. */
export function parseText(text: string, format: TextFormat): ParsedText {
  if (text.trim() === '') return { ok: false, problems: [EMPTY] };
  const r = format === 'json' ? parseJson(text) : parseYaml(text);
  if (r.ok && (r.doc === null || r.doc === undefined)) return { ok: false, problems: [EMPTY] };
  return r;
}

function parseYaml(text: string): ParsedText {
  const YAML = yaml();
  const lineCounter = new YAML.LineCounter();
  const { doc, problems: found } = parseYamlDocument(text, lineCounter);
  if (found.length > 0) {
    const lines = new Set<number>();
    const problems: string[] = [];
    const textLines = text.split('\n');
    for (const e of found) {
      const pos = lineCounter.linePos(e.offset);
      // One problem per line: the parser often reports one mistake twice, in other words.
      if (lines.has(pos.line)) continue;
      lines.add(pos.line);
      const hint = starInFlow(textLines[pos.line - 1] ?? '') ? STAR_HINT : '';
      problems.push(at(pos.line, pos.col, `YAML syntax error: ${e.message.split(' at line ')[0]}${hint}`));
    }
    return { ok: false, problems };
  }
  try {
    return { ok: true, doc: doc.toJS() };
  } catch (e) {
    return { ok: false, problems: [aliasProblem(doc, lineCounter, (e as Error).message)] };
  }
}

/** A `[*]` after a `{` on the line (found in one pass: a regular expression would backtrack on a long line). */
function starInFlow(line: string): boolean {
  const brace = line.indexOf('{');
  return brace >= 0 && line.indexOf('[*]', brace) > 0;
}

/**
 * `toJS` throws on an alias with no anchor. It mostly comes from a `*` in a flow mapping,
 * e.g. `{ layers[*].retry: ... }`, where `[*]` reads as a list holding an alias.
 */
function aliasProblem(doc: Document, lineCounter: LineCounter, message: string): string {
  const YAML = yaml();
  let offset = 0;
  YAML.visit(doc, {
    Alias(_, node) {
      if (node.resolve(doc) !== undefined || node.range === undefined || node.range === null) return undefined;
      offset = node.range[0];
      return YAML.visit.BREAK;
    },
  });
  const { line, col } = lineCounter.linePos(offset);
  return at(line, col, `YAML error: ${message.split('\n')[0].replace(/:\s*$/, '')}${STAR_HINT}`);
}

function parseJson(text: string): ParsedText {
  try {
    return { ok: true, doc: JSON.parse(text) };
  } catch (e) {
    const message = (e as Error).message;
    const before = text.slice(0, jsonErrorOffset(text, message)).split('\n');
    // V8 quotes the text in some messages (`Unexpected token 'a', "name: x..." is not valid JSON`): keep one line.
    const reason = message.replace(/ in JSON at position \d+.*$/s, '').replace(/, ".*" is not valid JSON$/s, '');
    return {
      ok: false,
      problems: [at(before.length, before[before.length - 1].length + 1, `JSON syntax error: ${reason}`)],
    };
  }
}

const POSITION = / at position (\d+)/;

/**
 * Where JSON.parse gave up. Some V8 messages carry no position; then it is found as the end
 * of the shortest prefix that is already wrong (a prefix is fine while it parses or fails
 * only for ending early; once wrong, every longer prefix is wrong too, so bisection works).
 */
function jsonErrorOffset(text: string, message: string): number {
  const m = POSITION.exec(message);
  if (m !== null) return Number(m[1]);
  if (message.startsWith('Unexpected end')) return text.length;
  let fine = 0;
  let wrong = text.length;
  while (wrong - fine > 1) {
    const mid = (fine + wrong) >> 1;
    if (prefixFine(text.slice(0, mid))) fine = mid;
    else wrong = mid;
  }
  return wrong - 1;
}

function prefixFine(prefix: string): boolean {
  try {
    JSON.parse(prefix);
    return true;
  } catch (e) {
    const message = (e as Error).message;
    const m = POSITION.exec(message);
    return message.startsWith('Unexpected end') || (m !== null && Number(m[1]) >= prefix.length);
  }
}
