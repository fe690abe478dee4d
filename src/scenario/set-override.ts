import { parseYamlDocument } from './yaml-document.js';
import type { Override } from './scenario.js';

/** One step of an override path: a key, an index, or `[*]` (every element of a list). */
export type PathSegment = { key: string } | { index: number } | { all: true };

export type ParsedPath = { ok: true; segments: PathSegment[] } | { ok: false; message: string };
export type ParsedSet = { ok: true; override: Override } | { ok: false; message: string };

/**
 * An override, how the user wrote it (`--set "arrival.rate=5"`), for messages, and where it
 * came from (`--set`, `variant naive`), for the record of what ran.
 */
export type LabelledOverride = Override & { origin?: string; from?: string };

/**
 * Keys no scenario has and no override may write: they name an object's prototype, so writing
 * them would reach every object of the process (`--set __proto__.polluted=1`).
 */
const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** Whether `key` is one no path and no value may hold (`__proto__`, `constructor`, `prototype`). */
export function isForbiddenKey(key: string): boolean {
  return FORBIDDEN_KEYS.has(key);
}

/** A bare key runs to the next `.` or `[`; a key holding them (a tool named `gmail.send`) is quoted. */
const BARE_KEY = /^[^.[\]"']+/;

/**
 * `upstream.faults[0].rate` → key upstream, key faults, index 0, key rate. A key with dots or
 * brackets in it is quoted, in brackets or after a dot: `tools["gmail.send"].latency`,
 * `tools."gmail.send".latency`, `tools['gmail.send']` (double quotes as JSON writes a string,
 * `\"` and `\\` escaped; single quotes literal). `__proto__`, `constructor` and `prototype`
 * are refused wherever they stand.
 */
export function parsePath(path: string): ParsedPath {
  const segments: PathSegment[] = [];
  const text = path.trim();
  const bad = (why: string): ParsedPath => ({ ok: false, message: `bad path ${JSON.stringify(path)}: ${why}` });
  if (text === '') return { ok: false, message: 'expected path=value, the path is empty' };
  if (text.startsWith('.') || text.startsWith('[')) return bad('expected it to start with a key');
  let i = 0;
  while (i < text.length) {
    const first = i === 0;
    if (!first && text[i] !== '.' && text[i] !== '[')
      return bad(`expected . or [ after a key or index at ${JSON.stringify(text.slice(i))}`);
    if (text[i] === '[') {
      const step = bracketStep(text, i + 1);
      if (typeof step === 'string')
        return step.startsWith('bad index')
          ? { ok: false, message: `${step} in ${path} (expected [0], [1], ... or [*])` }
          : bad(step);
      segments.push(step.segment);
      i = step.end;
    } else {
      const key = keyAt(text, first ? i : i + 1);
      if (key === undefined) return bad(`expected a key or [index] at ${JSON.stringify(text.slice(i))}`);
      if (typeof key === 'string') return bad(key);
      segments.push({ key: key.key });
      i = key.end;
    }
    const last = segments[segments.length - 1];
    if ('key' in last && isForbiddenKey(last.key))
      return bad(`${last.key} cannot be a key (it names an object's prototype, never a scenario field)`);
  }
  return { ok: true, segments };
}

/** A key at `i`, bare or quoted, and its end; why a quoted one is bad; undefined when none is there. */
function keyAt(text: string, i: number): { key: string; end: number } | string | undefined {
  if (text[i] === '"' || text[i] === "'") return quotedAt(text, i);
  const m = BARE_KEY.exec(text.slice(i));
  return m === null ? undefined : { key: m[0], end: i + m[0].length };
}

/** What `[` at `i - 1` holds, through its `]`: an index, `*`, or a quoted key. */
function bracketStep(text: string, i: number): { segment: PathSegment; end: number } | string {
  if (text[i] === '"' || text[i] === "'") {
    const q = quotedAt(text, i);
    if (typeof q === 'string') return q;
    if (text[q.end] !== ']') return `expected ] after the quoted key at ${JSON.stringify(text.slice(q.end))}`;
    return { segment: { key: q.key }, end: q.end + 1 };
  }
  const close = text.indexOf(']', i);
  if (close < 0) return `expected ] at ${JSON.stringify(text.slice(i - 1))}`;
  const inner = text.slice(i, close);
  if (inner === '*') return { segment: { all: true }, end: close + 1 };
  if (/^\d+$/.test(inner)) return { segment: { index: Number(inner) }, end: close + 1 };
  return `bad index [${inner}]`;
}

/** The quoted key at `i` (`"…"` as JSON reads it, `'…'` literally), and where it ends. */
function quotedAt(text: string, i: number): { key: string; end: number } | string {
  const quote = text[i];
  let j = i + 1;
  while (j < text.length && text[j] !== quote) j += quote === '"' && text[j] === '\\' ? 2 : 1;
  if (j >= text.length) return `the key quoted at ${JSON.stringify(text.slice(i))} has no closing ${quote}`;
  let key: string;
  if (quote === "'") key = text.slice(i + 1, j);
  else {
    try {
      key = JSON.parse(text.slice(i, j + 1)) as string;
    } catch {
      return `bad escape in the key ${text.slice(i, j + 1)} (write it as JSON writes a string)`;
    }
  }
  if (key === '') return 'a quoted key is empty';
  return { key, end: j + 1 };
}

/** A key as a path writes it: bare when it can be, else quoted (`"gmail.send"`), as `parsePath` reads it back. */
export function pathKey(key: string): string {
  return /^[^.[\]"'=,\s]+$/.test(key) && !/[\u0000-\u001f\u007f-\u009f]/.test(key) ? key : JSON.stringify(key);
}

/** A path's segments written back as text: `tools["gmail.send"].latency`. */
export function formatSegments(segments: readonly PathSegment[]): string {
  let out = '';
  for (const seg of segments) {
    if ('all' in seg) out += '[*]';
    else if ('index' in seg) out += `[${seg.index}]`;
    else out = withKey(out, seg.key);
  }
  return out;
}

/** `trail` (a path's text) one key further: `.key`, or `["gmail.send"]` for a key that needs quotes (`"a.b"` first). */
function withKey(trail: string, key: string): string {
  const k = pathKey(key);
  if (trail === '') return k;
  return k.startsWith('"') ? `${trail}[${k}]` : `${trail}.${k}`;
}

/**
 * Where the first `=` outside quotes is in `text` (`tools["a=b"].x=1`: the second), or -1: the
 * one split of `path=value` for `--set`, `--param` and `--params`.
 */
export function assignmentAt(text: string): number {
  return outsideQuotes(text, '=');
}

/**
 * `text` split at every `sep` outside quotes: a list of paths (`--params a,tools["x,y"].b`)
 * splits only between them.
 */
export function splitOutsideQuotes(text: string, sep: string): string[] {
  const parts: string[] = [];
  let rest = text;
  for (let at = outsideQuotes(rest, sep); at >= 0; at = outsideQuotes(rest, sep)) {
    parts.push(rest.slice(0, at));
    rest = rest.slice(at + 1);
  }
  parts.push(rest);
  return parts;
}

/** The index of the first `ch` in `text` outside a quoted key, or -1. */
function outsideQuotes(text: string, ch: string): number {
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote !== undefined) {
      if (quote === '"' && c === '\\') i++;
      else if (c === quote) quote = undefined;
    } else if (c === ch) return i;
    else if ((c === '"' || c === "'") && (i === 0 || text[i - 1] === '.' || text[i - 1] === '[')) quote = c;
  }
  return -1;
}

/** The path in `value` (`a.b[0]`) of the first key no value may hold (`__proto__`), or undefined. */
export function forbiddenKeyIn(value: unknown, trail = ''): string | undefined {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = forbiddenKeyIn(value[i], `${trail}[${i}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  for (const key of Object.keys(value)) {
    const here = trail === '' ? pathKey(key) : `${trail}.${pathKey(key)}`;
    if (isForbiddenKey(key)) return here;
    const found = forbiddenKeyIn((value as Record<string, unknown>)[key], here);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Whether two paths name some field in common: one is the other or above it, `[*]` matching any index. */
export function pathsOverlap(a: readonly PathSegment[], b: readonly PathSegment[]): boolean {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if ('all' in x || 'all' in y) continue;
    if ('key' in x ? !('key' in y) || x.key !== y.key : !('index' in y) || x.index !== y.index) return false;
  }
  return true;
}

/**
 * `path=value`: the value is read as YAML, so `0.5`, `true`, `engine`, `30s` and
 * `{policy: naive, attempts: 2}` all mean what they look like. An empty value (or `null`)
 * removes the key, bringing its default back, or removes a list element.
 */
export function parseSetText(flag: string): ParsedSet {
  const eq = assignmentAt(flag);
  if (eq < 0) return { ok: false, message: 'expected path=value' };
  const path = flag.slice(0, eq).trim();
  const parsed = parsePath(path);
  if (!parsed.ok) return parsed;
  const { doc, problems } = parseYamlDocument(flag.slice(eq + 1));
  if (problems.length > 0)
    return { ok: false, message: `the value is not valid YAML: ${problems[0].message.split(' at line')[0]}` };
  let value: unknown;
  try {
    value = doc.toJS() ?? null;
  } catch (e) {
    return { ok: false, message: `the value is not valid YAML: ${(e as Error).message}` };
  }
  const forbidden = forbiddenKeyIn(value);
  if (forbidden !== undefined)
    return {
      ok: false,
      message: `the value has the key ${forbidden}, which no scenario field has (it names an object's prototype)`,
    };
  return { ok: true, override: { path, value } };
}

/** Every `--set` flag; the malformed ones become problems naming the flag. */
export function parseSetFlags(flags: readonly string[]): { overrides: LabelledOverride[]; problems: string[] } {
  const overrides: LabelledOverride[] = [];
  const problems: string[] = [];
  for (const flag of flags) {
    const origin = `--set ${JSON.stringify(flag)}`;
    const r = parseSetText(flag);
    if (r.ok) overrides.push({ ...r.override, origin });
    else problems.push(`${origin}: ${r.message}`);
  }
  return { overrides, problems };
}

/**
 * Applies overrides in order to a copy of `doc` (the raw document, before validation, so the
 * schema then checks what they produced). Missing mappings on the way are created; indexing a
 * list past its end, or stepping into a scalar, is a problem `<origin or path>: <what>`.
 */
export function applyOverrides(
  doc: unknown,
  overrides: readonly LabelledOverride[],
): { doc: unknown; problems: string[] } {
  const r = applyEach(doc, overrides);
  return { doc: r.doc, problems: r.problems.map((p) => `${p.override.origin ?? p.override.path}: ${p.message}`) };
}

/** `applyOverrides`, each problem with the override that has it (for callers that word it themselves). */
export function applyEach(
  doc: unknown,
  overrides: readonly LabelledOverride[],
): { doc: unknown; problems: Array<{ override: LabelledOverride; message: string }> } {
  const root = structuredClone(doc);
  const problems: Array<{ override: LabelledOverride; message: string }> = [];
  for (const o of overrides) {
    const parsed = parsePath(o.path);
    const forbidden = forbiddenKeyIn(o.value);
    if (!parsed.ok) problems.push({ override: o, message: parsed.message });
    else if (forbidden !== undefined)
      problems.push({
        override: o,
        message: `the value has the key ${forbidden}, which no scenario field has (it names an object's prototype)`,
      });
    else for (const message of assign(root, parsed.segments, 0, o.value, '')) problems.push({ override: o, message });
  }
  return { doc: root, problems };
}

/** The key of `node` that `segs[i..]` spells with dots between its keys (`gmail.send` for `…gmail.send.latency`), if any. */
function dottedKey(node: Record<string, unknown>, segs: readonly PathSegment[], i: number): string | undefined {
  let name = '';
  for (let j = i; j < segs.length; j++) {
    const seg = segs[j];
    if (!('key' in seg)) return undefined;
    name = j === i ? seg.key : `${name}.${seg.key}`;
    if (j > i && Object.hasOwn(node, name)) return name;
  }
  return undefined;
}

function kindOf(v: unknown): string {
  if (v === undefined || v === null) return 'missing';
  if (Array.isArray(v)) return 'a list';
  return typeof v === 'object' ? 'a mapping' : `a ${typeof v}`;
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Sets (or, for null, removes) what `segs[i..]` names under `node`; returns problems. */
function assign(node: unknown, segs: readonly PathSegment[], i: number, value: unknown, trail: string): string[] {
  const seg = segs[i];
  const last = i === segs.length - 1;
  if ('key' in seg) {
    if (!isMapping(node)) return [`${trail || 'the document'} is ${kindOf(node)}, not a mapping`];
    const here = withKey(trail, seg.key);
    if (last) {
      if (value === null) delete node[seg.key];
      else node[seg.key] = structuredClone(value);
      return [];
    }
    if (node[seg.key] == null) {
      const dotted = dottedKey(node, segs, i);
      if (dotted !== undefined)
        return [
          `${trail || 'the document'} has no key ${JSON.stringify(seg.key)} but has ${JSON.stringify(dotted)}: a name with dots is quoted, ${withKey(trail, dotted)}`,
        ];
    }
    if (node[seg.key] == null && 'key' in segs[i + 1]) node[seg.key] = {};
    return assign(node[seg.key], segs, i + 1, value, here);
  }
  if (!Array.isArray(node)) return [`${trail} is ${kindOf(node)}, not a list`];
  if ('index' in seg && seg.index >= node.length) {
    return [`${trail} has ${node.length} item${node.length === 1 ? '' : 's'}, so [${seg.index}] is past its end`];
  }
  const indexes = 'index' in seg ? [seg.index] : node.map((_, j) => j);
  if (!last) return indexes.flatMap((j) => assign(node[j], segs, i + 1, value, `${trail}[${j}]`));
  // Backwards, so removing an element does not shift the ones still to visit.
  for (const j of indexes.reverse()) {
    if (value === null) node.splice(j, 1);
    else node[j] = structuredClone(value);
  }
  return [];
}
