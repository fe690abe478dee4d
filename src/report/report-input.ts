import type { z } from 'zod';
import { RESULT_SCHEMA, type ResultFile } from '../run/metrics/result.js';
import { escapeControls } from '../scenario/control-chars.js';
import { formatPath } from '../scenario/issues.js';
import { parseText } from '../scenario/parse-text.js';
import { didYouMean } from '../scenario/suggest.js';
import { SWEEP_SCHEMA, type SweepFile } from './sweep-file.js';
import { resultFileSchema } from './result-schema.js';
import { sweepFileSchema } from './sweep-schema.js';

/** A file `stormlab report` can render: a run/compare result or a sweep. */
export type ReportInput = { kind: 'result'; file: ResultFile } | { kind: 'sweep'; file: SweepFile };

/** The input, or one line saying what is wrong with it and where (prefixed by `source`). */
export type ReadReport = { ok: true; input: ReportInput } | { ok: false; problem: string };

const SCHEMAS = [RESULT_SCHEMA, SWEEP_SCHEMA];
const KINDS: Record<ReportInput['kind'], string> = {
  result: `${RESULT_SCHEMA} (from run or compare --json)`,
  sweep: `${SWEEP_SCHEMA} (from sweep --json)`,
};
const KNOWN = `${KINDS.result} or ${KINDS.sweep}`;
/** Problems named in the one line; the rest are counted. */
const SHOWN = 3;

/** A JSON value as a message shows it. */
function show(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 37)}...` : v);
  if (Array.isArray(v)) return v.length === 0 ? 'an empty array' : 'an array';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'an object' : String(v);
}

const TYPE_WORDS: Record<string, string> = {
  number: 'a number',
  string: 'a string',
  array: 'an array',
  object: 'an object',
  boolean: 'true or false',
};

/** zod's issues in the words the rest of stormlab uses: `expected a number, got "x"`. */
const errorMap: z.core.$ZodErrorMap = (iss) => {
  const got = (what: string): string =>
    iss.input === undefined ? `missing, expected ${what}` : `expected ${what}, got ${show(iss.input)}`;
  if (iss.code === 'invalid_type') return got(TYPE_WORDS[iss.expected] ?? iss.expected);
  if (iss.code === 'too_small')
    return iss.origin === 'array'
      ? `expected at least ${String(iss.minimum)} entry, got none`
      : got(`a number above ${String(iss.minimum)}`);
  if (iss.code === 'invalid_union') return got('a number, a string or true/false');
  if (iss.code === 'invalid_value') return got(iss.values.map((v) => JSON.stringify(v)).join(' or '));
  return got('a valid value');
};

function issuesLine(source: string, issues: readonly z.core.$ZodIssue[]): string {
  const lines = issues.slice(0, SHOWN).map((iss) => `${formatPath(iss.path)}: ${iss.message}`);
  const more = issues.length > SHOWN ? ` (and ${issues.length - SHOWN} more)` : '';
  return `${source}: ${lines.join('; ')}${more}`;
}

/** Which file this is, by its `schema` field. */
function kindOf(doc: unknown, source: string): ReportInput['kind'] | string {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
    return `${source}: expected a JSON object with a "schema" field, got ${show(doc)}`;
  const schema = (doc as { schema?: unknown }).schema;
  if (schema === RESULT_SCHEMA) return 'result';
  if (schema === SWEEP_SCHEMA) return 'sweep';
  if (schema === undefined) return `${source}: missing "schema", expected ${KNOWN}`;
  const hint = typeof schema === 'string' ? didYouMean(schema, SCHEMAS) : '';
  return `${source}: unknown schema ${show(schema)}${hint}, expected ${KNOWN}`;
}

/**
 * Reads the text of a result or sweep file: JSON syntax errors with their line:column, an
 * unknown or missing `schema`, and the JSON paths of the first shape problems, all as one line.
 * `accept` narrows the kinds a command takes (`diff` takes results only).
 */
export function readReportInput(
  text: string,
  source: string,
  accept: ReadonlyArray<ReportInput['kind']> = ['result', 'sweep'],
): ReadReport {
  if (text.trim() === '') return { ok: false, problem: `${source}: the file is empty, expected ${KNOWN}` };
  // Editors on Windows may start the file with a byte-order mark; JSON.parse would refuse it.
  const parsed = parseText(text.replace(/^\uFEFF/, ''), 'json');
  if (!parsed.ok) return { ok: false, problem: `${source}:${parsed.problems[0]}` };
  const kind = kindOf(parsed.doc, source);
  if (kind !== 'result' && kind !== 'sweep') return { ok: false, problem: kind };
  if (!accept.includes(kind))
    return {
      ok: false,
      problem: `${source}: a ${kind} file (${kind === 'result' ? RESULT_SCHEMA : SWEEP_SCHEMA}), expected ${accept.map((k) => KINDS[k]).join(' or ')}`,
    };
  const schema = kind === 'result' ? resultFileSchema : sweepFileSchema;
  const r = schema.safeParse(parsed.doc, { error: errorMap });
  if (!r.success) return { ok: false, problem: issuesLine(source, r.error.issues) };
  // The checked document itself (loose objects kept every field), typed as what wrote it, its
  // strings made printable: a name in a file (hand-edited, or from elsewhere) may hold
  // terminal escapes, and every output of report and diff shows them escaped (`\u001b`).
  const doc = printableStrings(parsed.doc);
  return {
    ok: true,
    input: kind === 'result' ? { kind, file: doc as ResultFile } : { kind, file: doc as SweepFile },
  };
}

/**
 * `v` with every string in it, keys too, passed through `escapeControls`, in place. The walk
 * keeps its own stack, so a deeply nested file cannot overflow the call stack; it is linear.
 */
function printableStrings(v: unknown): unknown {
  if (typeof v === 'string') return escapeControls(v);
  const todo: object[] = [];
  if (v !== null && typeof v === 'object') todo.push(v);
  for (let o = todo.pop(); o !== undefined; o = todo.pop()) {
    const rec = o as Record<string, unknown>;
    for (const k of Object.keys(rec)) {
      const value = rec[k];
      if (typeof value === 'string') {
        const printable = escapeControls(value);
        if (printable !== value) rec[k] = printable;
      } else if (value !== null && typeof value === 'object') todo.push(value);
      const key = escapeControls(k);
      if (key !== k) {
        delete rec[k];
        rec[key] = typeof value === 'string' ? escapeControls(value) : value;
      }
    }
  }
  return v;
}
