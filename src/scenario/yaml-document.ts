import type { Document, LineCounter } from 'yaml';
import { yaml } from './yaml-module.js';

/** A problem the YAML text has, at an offset into it. */
export interface YamlProblem {
  offset: number;
  message: string;
}

/** yaml's own words for a repeated key, kept so a message reads the same whichever check found it. */
const DUPLICATE_KEY = 'Map keys must be unique';

/**
 * Parses YAML text into a document and every problem it has: the parser's syntax errors and
 * each repeated key in a mapping, in text order. The parser's own repeated-key check compares
 * every key with every earlier key of its mapping (40,000 keys took 32 s), so it is off and
 * keys are checked here, each once, against a `Set` of the mapping's scalar keys: linear time,
 * same verdicts (a scalar key equals another of the same value: `1` and `"1"` differ, as there).
 */
export function parseYamlDocument(text: string, lineCounter?: LineCounter): { doc: Document; problems: YamlProblem[] } {
  const YAML = yaml();
  const doc = YAML.parseDocument(text, { lineCounter, uniqueKeys: false });
  const problems: YamlProblem[] = doc.errors.map((e) => ({ offset: e.pos[0], message: e.message }));
  const repeated = repeatedKeys(doc);
  if (repeated.length === 0) return { doc, problems };
  problems.push(...repeated.map((offset) => ({ offset, message: DUPLICATE_KEY })));
  problems.sort((a, b) => a.offset - b.offset);
  return { doc, problems };
}

/** Where each key that repeats an earlier key of its mapping starts. */
function repeatedKeys(doc: Document): number[] {
  const YAML = yaml();
  const at: number[] = [];
  const NO_KEY = Symbol('no key');
  YAML.visit(doc, {
    Map(_, map) {
      const seen = new Set<unknown>();
      for (const pair of map.items) {
        const key = pair.key;
        // An empty key is `null` (`: x`): yaml counts two as the same. Other non-scalar keys
        // (a mapping as a key) equal only themselves, so they never repeat.
        let value: unknown;
        if (key === null) value = NO_KEY;
        else if (YAML.isScalar(key)) value = key.value;
        else continue;
        if (!seen.has(value)) seen.add(value);
        else at.push(YAML.isNode(key) ? (key.range?.[0] ?? 0) : 0);
      }
      return undefined;
    },
  });
  return at;
}
