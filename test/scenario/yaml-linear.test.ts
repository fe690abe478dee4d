import { describe, expect, it } from 'vitest';
import { parseText } from '../../src/scenario/parse-text.js';
import { MAX_PROBLEMS_SHOWN, ScenarioError, shownProblems } from '../../src/scenario/scenario-error.js';
import { yaml } from '../../src/scenario/yaml-module.js';
import { cli } from '../cli/capture-io.js';
import { BASE, errorOf, problemsOf, tempFile } from './helpers.js';

/** `n` keys `k0: 1` … in one mapping, under the base scenario's keys. */
function manyKeys(n: number, extra = ''): string {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) lines.push(`k${i}: 1`);
  return `${BASE}${lines.join('\n')}\n${extra}`;
}

/**
 * How many times the callback of an array search (`some`, `find`, …) runs during `f`: the parser's own repeated-key
 * check runs `items.some(...)` once per key over every earlier key (n²/2 callbacks), so this
 * count tells a linear parse from a quadratic one by counting, not by timing.
 */
function callbacksDuring(f: () => void): number {
  const methods = ['some', 'every', 'find', 'findIndex', 'findLast', 'findLastIndex'] as const;
  const saved = methods.map((m) => Array.prototype[m]);
  let calls = 0;
  methods.forEach((m, i) => {
    const original = saved[i] as (this: unknown[], ...args: unknown[]) => unknown;
    Object.defineProperty(Array.prototype, m, {
      configurable: true,
      writable: true,
      value(this: unknown[], ...args: unknown[]) {
        const cb = args[0] as (...a: unknown[]) => unknown;
        args[0] = (...a: unknown[]) => {
          calls++;
          return cb(...a);
        };
        return original.apply(this, args);
      },
    });
  });
  try {
    f();
  } finally {
    methods.forEach((m, i) => {
      Object.defineProperty(Array.prototype, m, { configurable: true, writable: true, value: saved[i] });
    });
  }
  return calls;
}

/** What parseText said when the parser checked keys itself: its errors, one per line. */
function byParsersOwnCheck(text: string): ReturnType<typeof parseText> {
  const doc = yaml().parseDocument(text);
  if (doc.errors.length === 0) return parseText(text, 'yaml');
  const lines = new Set<number>();
  const problems: string[] = [];
  for (const e of doc.errors) {
    const pos = e.linePos?.[0] ?? { line: 1, col: 1 };
    if (lines.has(pos.line)) continue;
    lines.add(pos.line);
    problems.push(`${pos.line}:${pos.col}: YAML syntax error: ${e.message.split(' at line ')[0]}`);
  }
  return { ok: false, problems };
}

describe('YAML repeated keys: found in linear time, said as before', () => {
  it('the counter sees the quadratic check it guards against (so the linear bound below can fail)', () => {
    const text = manyKeys(2000);
    const quadratic = callbacksDuring(() => yaml().parseDocument(text));
    expect(quadratic).toBeGreaterThan(2000 ** 2 / 4);
  });

  it('40,000 keys: array callbacks grow linearly (a few per key), not with the square of the keys', () => {
    const keys = 40_000;
    const text = manyKeys(keys, 'k7: 2\n');
    let r: ReturnType<typeof parseText> | undefined;
    const calls = callbacksDuring(() => {
      r = parseText(text, 'yaml');
    });
    const half = callbacksDuring(() => parseText(manyKeys(keys / 2, 'k7: 2\n'), 'yaml'));
    // Twice the keys, about twice the work (four times if it were quadratic); a bounded few per key.
    expect(calls / half).toBeLessThan(2.5);
    expect(calls).toBeLessThan(50 * keys);
    // The repeated key is still found, at its place, in the parser's words.
    const line = BASE.split('\n').length + keys;
    expect(r).toEqual({ ok: false, problems: [`${line}:1: YAML syntax error: Map keys must be unique`] });
  });

  it('same verdicts as the parser: block and flow mappings, nested, null and typed keys', () => {
    expect(problemsOf('a: 1\na: 2\n')).toEqual(['2:1: YAML syntax error: Map keys must be unique']);
    expect(problemsOf('x: {a: 1, b: 2, a: 3}\n')).toEqual(['1:17: YAML syntax error: Map keys must be unique']);
    expect(problemsOf('x:\n  y:\n    a: 1\n    a: 2\n')).toEqual(['4:5: YAML syntax error: Map keys must be unique']);
    expect(problemsOf('~: 1\nnull: 2\n')).toEqual(['2:1: YAML syntax error: Map keys must be unique']);
    // Whatever the text, the lines are the ones the parser's own check gives (its errors, by line).
    const corpus = [
      '1: a\n"1": b\n',
      'x: {a: 1}\ny: {a: 1}\n',
      'a: 1\na: 2\nb: [\n',
      'a: 1\nb: 2\na: 3\nb: 4\n',
      '- {a: 1, a: 2}\n- a: 1\n  a: 1\n',
      'a: &x 1\n*x : 2\n',
      '? [1, 2]\n: a\n? [1, 2]\n: b\n',
      'true: 1\nTrue: 2\n"true": 3\n',
      '0x10: a\n16: b\n',
    ];
    for (const text of corpus) expect(parseText(text, 'yaml'), text).toEqual(byParsersOwnCheck(text));
  });

  it('a --set value with a repeated key is refused the same way', () => {
    expect(problemsOf(BASE, ['arrival={type: constant, rate: 5, rate: 6}'])).toEqual([
      '--set "arrival={type: constant, rate: 5, rate: 6}": the value is not valid YAML: Map keys must be unique',
    ]);
  });
});

describe('the list of problems is capped: the first ones, then how many more', () => {
  it('shownProblems keeps short lists whole and counts the rest of long ones', () => {
    const few = ['a', 'b'];
    expect(shownProblems(few)).toEqual(few);
    const many = Array.from({ length: 1234 }, (_, i) => `p${i}`);
    const shown = shownProblems(many);
    expect(shown).toHaveLength(MAX_PROBLEMS_SHOWN + 1);
    expect(shown.slice(0, MAX_PROBLEMS_SHOWN)).toEqual(many.slice(0, MAX_PROBLEMS_SHOWN));
    expect(shown[MAX_PROBLEMS_SHOWN]).toBe(`and ${(1234 - MAX_PROBLEMS_SHOWN).toLocaleString('en-US')} more problems`);
  });

  it('5,000 unknown keys: every one is a problem, the message and the CLI say 20 and the count', async () => {
    const keys = 5_000;
    const e = errorOf(manyKeys(keys));
    expect(e).toBeInstanceOf(ScenarioError);
    expect(e.problems).toHaveLength(keys);
    expect(e.message.split('\n')).toHaveLength(1 + MAX_PROBLEMS_SHOWN + 1);
    const file = tempFile('many-keys.yaml', manyKeys(keys));
    const r = await cli(['run', file]);
    expect(r.code).toBe(2);
    const lines = r.err.trimEnd().split('\n');
    expect(lines).toHaveLength(MAX_PROBLEMS_SHOWN + 1);
    expect(lines[0]).toBe(`${file}: k0: unknown key`);
    expect(lines[MAX_PROBLEMS_SHOWN]).toBe(
      `${file}: and ${(keys - MAX_PROBLEMS_SHOWN).toLocaleString('en-US')} more problems`,
    );
  });
});
