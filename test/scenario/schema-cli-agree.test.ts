import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { failure } from '../../src/cli/failure.js';
import { SeededRandom } from '../../src/engine/random.js';
import { listBundledScenarios } from '../../src/scenario/bundled.js';
import { scenarioJsonSchema } from '../../src/scenario/json-schema.js';
import { resolveDocument } from '../../src/scenario/resolve-scenario.js';
import { ScenarioError } from '../../src/scenario/scenario-error.js';
import { captureIo } from '../cli/capture-io.js';
import { BASE } from './helpers.js';

/**
 * The rules the JSON Schema cannot state, by the words the loader refuses them in: what a
 * field means beside other fields (references, names given twice, a min above its max, weights
 * adding up to nothing, engine options that clash, a run too large, a fault ending before it
 * starts), or a value read as text (a duration's units). A refusal the schema let through must be one of
 * these: any other is a range the schema should state.
 */
const CROSS_FIELD = [
  /unknown (model|tool|stage|variant)/,
  /^engine: /,
  /logical calls/,
  /expected a time after from|is past its end/,
  /expected at least|expected \d+ weights/,
  /the last layer calls the model/,
  // A duration written as text: its units are read by code (the schema only checks its form).
  /expected a duration/,
  // What a variant's override does to the document: its paths are the loader's to follow.
  /^variants\.[^:]+: [^ ]+: /,
];

const schema = scenarioJsonSchema();
const ajv = new Ajv2020({ strict: false, allErrors: false });
const schemaAccepts = ajv.compile(schema);

/** Values a mutation puts in place: the edges of the ranges the loader checks, and wrong types. */
const VALUES: unknown[] = [
  -1,
  -0.5,
  0,
  0.5,
  1,
  1.5,
  2,
  3,
  100,
  1000,
  1001,
  1e9,
  'x',
  '',
  '5s',
  '-5s',
  true,
  false,
  null,
  [],
  {},
  [1],
  { dist: 'uniform', min: 1, max: 3 },
];

type Json = unknown;

/** Every place in `doc` (a path of keys and indices), the root excluded. */
function places(doc: Json, at: Array<string | number> = [], out: Array<Array<string | number>> = []) {
  if (Array.isArray(doc))
    doc.forEach((v, i) => {
      out.push([...at, i]);
      places(v, [...at, i], out);
    });
  else if (doc !== null && typeof doc === 'object')
    for (const [k, v] of Object.entries(doc)) {
      out.push([...at, k]);
      places(v, [...at, k], out);
    }
  return out;
}

/** `doc` (a deep copy) with the value at `path` replaced, or removed when `value` is undefined. */
function mutate(doc: Json, path: Array<string | number>, value: unknown): Json {
  const copy = structuredClone(doc) as Record<string | number, unknown>;
  let here = copy as Record<string | number, unknown>;
  for (const seg of path.slice(0, -1)) here = here[seg] as Record<string | number, unknown>;
  const last = path[path.length - 1];
  if (value === undefined) {
    if (Array.isArray(here)) here.splice(last as number, 1);
    else delete here[last];
  } else here[last] = structuredClone(value);
  return copy;
}

/** The loader's verdict: its problems (none: it loads), and what the CLI prints and exits with for them. */
function loaderVerdict(doc: Json): { problems: string[]; printed: string; code: number } {
  try {
    resolveDocument(doc, 'mutated.yaml', { checkFile: true });
    return { problems: [], printed: '', code: 0 };
  } catch (e) {
    const io = captureIo();
    const code = failure(io, e);
    return { problems: e instanceof ScenarioError ? e.problems : [String(e)], printed: io.err, code };
  }
}

const MUTATIONS = 200;

/** The base scenario of the loader's tests, with tools, users and tenants to break. */
const STATED = YAML.parse(`${BASE}tools:
  gmail.send: { latency: 30ms, rps: 5 }
users: { patience: 5s, onError: 0.5, maxResubmits: 2 }
tenants: [{ name: a, weight: 1 }]
entry: { rps: 5 }
`) as Record<string, unknown>;

/** The ranges the hostile-input sweep found the schema silent on, each broken once. */
const RANGES: Array<[string, (d: Record<string, any>) => void]> = [
  ['tenant weight > 0', (d) => (d.tenants[0].weight = 0)],
  ['entry.rps > 0', (d) => (d.entry.rps = 0)],
  ['replicas from 1', (d) => (d.layers[0].replicas = 0)],
  ['replicas to 1000', (d) => (d.layers[0].replicas = 1001)],
  ['tool calls >= 1', (d) => (d.layers[0].tools = [{ kind: 'tool', tool: 'gmail.send', sideEffect: false, calls: 0 }])],
  ['fault rate <= 1', (d) => (d.upstream.faults = [{ kind: 'errors', rate: 1.5 }])],
  ['users.onError <= 1', (d) => (d.users.onError = 2)],
  ['maxResubmits >= 0', (d) => (d.users.maxResubmits = -1)],
  ['fan-out an integer', (d) => (d.layers[0].fanout = 2.5)],
  ['fan-out parameters > 0', (d) => (d.layers[0].fanout = { dist: 'exponential', mean: 0 })],
  ['fan-out choice values >= 1', (d) => (d.layers[0].fanout = { dist: 'choice', values: [0, 2] })],
  ['an error status from 400', (d) => (d.upstream.faults = [{ kind: 'errors', status: 200 }])],
  ['a duration above 0', (d) => (d.duration = 0)],
  ['a name without control characters', (d) => (d.layers[0].name = 'a\u001b[2J')],
];

describe('the JSON Schema and the loader agree, over seeded random mutations of every bundled scenario', () => {
  const bundled = listBundledScenarios();

  it('finds the bundled scenarios, and the schema accepts each as written', () => {
    expect(bundled.length).toBeGreaterThan(5);
    for (const s of bundled) {
      const doc = YAML.parse(readFileSync(s.file, 'utf8'));
      expect(schemaAccepts(doc), `${s.name}: ${JSON.stringify(schemaAccepts.errors)}`).toBe(true);
      expect(loaderVerdict(doc).problems, s.name).toEqual([]);
    }
  });

  it.each(RANGES)('the schema states it, as the loader does: %s', (_, breakIt) => {
    expect(schemaAccepts(STATED), JSON.stringify(schemaAccepts.errors)).toBe(true);
    expect(loaderVerdict(STATED).problems).toEqual([]);
    const broken = structuredClone(STATED);
    breakIt(broken);
    expect(loaderVerdict(broken).problems).not.toEqual([]);
    expect(schemaAccepts(broken)).toBe(false);
  });

  it.each(bundled.map((s) => [s.name, s.file]))(
    '%s × 200 mutations: what loads, the schema accepts; what the schema accepts, only a cross-field rule refuses; never a stack',
    (name, file) => {
      const doc = YAML.parse(readFileSync(file, 'utf8'));
      const all = places(doc);
      const random = new SeededRandom(`schema-cli ${name}`);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random.next() * xs.length)];
      const disagreements: string[] = [];
      for (let i = 0; i < MUTATIONS; i++) {
        const path = pick(all);
        const value = random.next() < 0.1 ? undefined : pick(VALUES);
        const mutated = mutate(doc, path, value);
        const where = `${path.join('.')} = ${value === undefined ? '(removed)' : JSON.stringify(value)}`;
        const verdict = loaderVerdict(mutated);
        const accepted = schemaAccepts(mutated);
        // Bad input is one line per problem and exit 2, never a stack or an internal error.
        if (verdict.code !== 0) {
          expect(verdict.code, `${where}: ${verdict.printed}`).toBe(2);
          expect(verdict.printed, where).not.toMatch(/^\s+at |internal error/m);
        }
        if (verdict.problems.length === 0 && !accepted)
          disagreements.push(
            `${where}: loads, but the schema refuses it: ${JSON.stringify(schemaAccepts.errors?.[0])}`,
          );
        if (verdict.problems.length > 0 && accepted) {
          const stated = verdict.problems.filter((p) => !CROSS_FIELD.some((re) => re.test(p)));
          if (stated.length > 0) disagreements.push(`${where}: the schema accepts it, the loader says ${stated[0]}`);
        }
      }
      expect(disagreements).toEqual([]);
    },
  );
});
