import { yaml } from './yaml-module.js';
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

const STEP = /^(?:\.?([^.[\]]+)|\[([^\]]*)\])/;

/** `upstream.faults[0].rate` → key upstream, key faults, index 0, key rate. */
export function parsePath(path: string): ParsedPath {
  const segments: PathSegment[] = [];
  let rest = path.trim();
  if (rest === '') return { ok: false, message: 'expected path=value, the path is empty' };
  if (rest.startsWith('.') || rest.startsWith('['))
    return { ok: false, message: `bad path ${JSON.stringify(path)}: expected it to start with a key` };
  while (rest !== '') {
    const m = STEP.exec(rest);
    if (m === null)
      return {
        ok: false,
        message: `bad path ${JSON.stringify(path)}: expected a key or [index] at ${JSON.stringify(rest)}`,
      };
    if (m[1] !== undefined) segments.push({ key: m[1] });
    else if (m[2] === '*') segments.push({ all: true });
    else if (/^\d+$/.test(m[2])) segments.push({ index: Number(m[2]) });
    else return { ok: false, message: `bad index [${m[2]}] in ${path} (expected [0], [1], ... or [*])` };
    rest = rest.slice(m[0].length);
  }
  return { ok: true, segments };
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
  const eq = flag.indexOf('=');
  if (eq < 0) return { ok: false, message: 'expected path=value' };
  const path = flag.slice(0, eq).trim();
  const parsed = parsePath(path);
  if (!parsed.ok) return parsed;
  const doc = yaml().parseDocument(flag.slice(eq + 1));
  if (doc.errors.length > 0)
    return { ok: false, message: `the value is not valid YAML: ${doc.errors[0].message.split(' at line')[0]}` };
  try {
    return { ok: true, override: { path, value: doc.toJS() ?? null } };
  } catch (e) {
    return { ok: false, message: `the value is not valid YAML: ${(e as Error).message}` };
  }
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
    if (!parsed.ok) problems.push({ override: o, message: parsed.message });
    else for (const message of assign(root, parsed.segments, 0, o.value, '')) problems.push({ override: o, message });
  }
  return { doc: root, problems };
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
    const here = trail === '' ? seg.key : `${trail}.${seg.key}`;
    if (last) {
      if (value === null) delete node[seg.key];
      else node[seg.key] = structuredClone(value);
      return [];
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
