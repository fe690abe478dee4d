import { describe, expect, it } from 'vitest';
import { GateError } from '../../src/gate/gate-error.js';
import { parseResultFile } from '../../src/gate/parse-result-file.js';
import { file, variant } from './diff-fixture.js';

function problem(text: string): string {
  try {
    parseResultFile(text, 'new.json');
  } catch (e) {
    expect(e).toBeInstanceOf(GateError);
    return (e as Error).message;
  }
  throw new Error('expected a GateError');
}

/** A valid result file with `edit` applied to its parsed form. */
function edited(edit: (doc: any) => void): string {
  const doc = JSON.parse(JSON.stringify(file([variant('naive'), variant('engine')])));
  edit(doc);
  return JSON.stringify(doc);
}

describe('parseResultFile', () => {
  it('reads a result file back, a BOM and nulls (no figure) included', () => {
    const f = file([variant('engine', { recoveryMs: null })]);
    expect(parseResultFile(`\uFEFF${JSON.stringify(f)}`, 'x.json')).toEqual(f);
    expect(parseResultFile(edited((d) => (d.variants[0].goodput = null)), 'x.json').variants[0].goodput).toBeNull();
  });

  it.each([
    ['not JSON', '{"schema": ', /^new\.json: not JSON \(.+\)$/],
    ['empty', '', /^new\.json: not JSON \(.+\)$/],
    ['a list', '[1, 2]', /^new\.json: expected a stormlab result \(a JSON object with "schema": "stormlab\.result\/v1"\), got a list$/],
    ['no schema', '{"variants": []}', /^new\.json: schema: expected "stormlab\.result\/v1" \(a file written by stormlab run or compare --json\), got nothing \(the field is missing\)$/],
    ['another schema', '{"schema": "stormlab.diff/v1"}', /^new\.json: schema: expected "stormlab\.result\/v1" .*, got "stormlab\.diff\/v1"$/],
  ])('%s: one line naming the file', (_, text, message) => {
    const m = problem(text);
    expect(m).toMatch(message);
    expect(m).not.toContain('\n');
  });

  it.each([
    ['variants missing', (d: any) => delete d.variants, 'new.json: variants: expected a list, got nothing (the field is missing)'],
    ['seed a string', (d: any) => (d.seed = '1'), 'new.json: seed: expected a number, got "1"'],
    ['a variant not an object', (d: any) => (d.variants[1] = 7), 'new.json: variants[1]: expected an object, got 7'],
    ['a figure a string', (d: any) => (d.variants[1].roots.latencyMs.p99 = 'fast'), 'new.json: variants[1].roots.latencyMs.p99: expected a number, got "fast"'],
    ['a layer without latency', (d: any) => delete d.variants[0].layers[2].latencyMs, 'new.json: variants[0].layers[2].latencyMs: expected an object, got nothing (the field is missing)'],
    ['upstream missing', (d: any) => delete d.variants[0].upstream, 'new.json: variants[0].upstream: expected an object, got nothing (the field is missing)'],
    ['a long string', (d: any) => (d.variants[0].name = 5), 'new.json: variants[0].name: expected a string, got 5'],
  ])('%s: names the JSON path', (_, edit, message) => {
    expect(problem(edited(edit))).toBe(message);
  });

  it('a long value is cut short in the message', () => {
    expect(problem(edited((d) => (d.scenario = { a: 1 })))).toBe('new.json: scenario: expected a string, got an object');
    expect(problem(edited((d) => (d.variants[0].goodput = 'x'.repeat(100))))).toBe(`new.json: variants[0].goodput: expected a number, got "${'x'.repeat(36)}...`);
  });
});
