import { isDeepStrictEqual } from 'node:util';
import type { OverrideRecord } from '../run/metrics/result.js';
import { applyOverrides, parsePath, pathsOverlap, type LabelledOverride, type PathSegment } from './set-override.js';

/**
 * What each override of a run did, once per field: applied in order to the file's document,
 * each records its value, where it came from, and what it replaced (the file's value, or an
 * earlier override's). An override whose path covers an earlier one's (`engine.throttle` after
 * `engine.throttle.k`) replaces it: the earlier one is gone from the list, as from the document.
 */
export function overrideRecords(file: unknown, overrides: readonly LabelledOverride[]): OverrideRecord[] {
  const out: Array<{ record: OverrideRecord; segments: PathSegment[] }> = [];
  let doc = file;
  for (const o of overrides) {
    const parsed = parsePath(o.path);
    if (!parsed.ok) continue;
    const segments = parsed.segments;
    const record: OverrideRecord = { path: o.path, value: o.value, from: o.from ?? 'override' };
    const before = valueAt(doc, segments);
    if (before.found) {
      record.was = before.value;
      // An earlier override that wrote there set it, even to what the file had.
      record.wasFrom = out.findLast((e) => pathsOverlap(e.segments, segments))?.record.from ?? 'scenario';
    }
    for (let i = out.length - 1; i >= 0; i--) if (covers(segments, out[i].segments)) out.splice(i, 1);
    out.push({ record, segments });
    doc = applyOverrides(doc, [o]).doc;
  }
  return out.map((e) => e.record);
}

type Found = { found: true; value: unknown } | { found: false };

/** The value at a path; for `[*]`, the one every element holds (not found when they differ, or a step is missing). */
function valueAt(node: unknown, segments: readonly PathSegment[]): Found {
  let nodes: unknown[] = [node];
  for (const seg of segments) {
    const next: unknown[] = [];
    for (const n of nodes) {
      if ('key' in seg) {
        if (typeof n === 'object' && n !== null && !Array.isArray(n) && seg.key in n)
          next.push((n as Record<string, unknown>)[seg.key]);
      } else if (Array.isArray(n)) {
        if ('all' in seg) next.push(...n);
        else if (seg.index < n.length) next.push(n[seg.index]);
      }
    }
    if (next.length === 0) return { found: false };
    nodes = next;
  }
  const [first, ...rest] = nodes;
  return rest.every((v) => isDeepStrictEqual(v, first)) ? { found: true, value: first } : { found: false };
}

/** Whether `a` is `b` or a path above it, every element of `[*]` included (`[*]` covers `[2]`, not the other way). */
function covers(a: readonly PathSegment[], b: readonly PathSegment[]): boolean {
  if (a.length > b.length) return false;
  return a.every((x, i) => {
    const y = b[i];
    if ('all' in x) return 'all' in y || 'index' in y;
    if ('key' in x) return 'key' in y && y.key === x.key;
    return 'index' in y && y.index === x.index;
  });
}
