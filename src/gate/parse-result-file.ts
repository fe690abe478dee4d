import { RESULT_SCHEMA, type ResultFile } from '../run/metrics/result.js';
import { GateError } from './gate-error.js';

/** What a field must be: a string, a number, a figure (a number, or null for none), an object, a list. */
type Shape = 'string' | 'number' | 'figure' | { [key: string]: Shape } | [Shape];

const LAYER: Shape = { name: 'string', latencyMs: { p99: 'figure' } };
const VARIANT: Shape = {
  name: 'string',
  amplification: 'figure',
  goodput: 'figure',
  successRate: 'figure',
  roots: { latencyMs: { p99: 'figure' } },
  layers: [LAYER],
  upstream: { wastedTokens: 'figure' },
  recoveryMs: 'figure',
};
const FILE: Shape = { scenario: 'string', seed: 'number', variants: [VARIANT] };

/**
 * Reads a `stormlab.result/v1` file for `stormlab diff`, checking the schema field and the
 * parts diff reads, so a wrong or hand-broken file is one line naming the file and the JSON
 * path (`new.json: variants[1].roots.latencyMs.p99: expected a number, got "fast"`), not a
 * crash. Fields diff does not read are not checked. `source` names the file in messages.
 */
export function parseResultFile(text: string, source: string): ResultFile {
  let doc: unknown;
  try {
    doc = JSON.parse(text.replace(/^\uFEFF/, '')); // editors on Windows like to add a BOM
  } catch (e) {
    throw new GateError(`${source}: not JSON (${(e as Error).message.replace(/\s+/g, ' ').slice(0, 120)})`);
  }
  if (!isObject(doc)) throw new GateError(`${source}: expected a stormlab result (a JSON object with "schema": "${RESULT_SCHEMA}"), got ${describe(doc)}`);
  if (doc.schema !== RESULT_SCHEMA) {
    throw new GateError(`${source}: schema: expected "${RESULT_SCHEMA}" (a file written by stormlab run or compare --json), got ${describe(doc.schema)}`);
  }
  const problem = mismatch(doc, FILE, '');
  if (problem !== undefined) throw new GateError(`${source}: ${problem}`);
  return doc as unknown as ResultFile;
}

/** The first place `value` does not fit `shape`, as `path: expected …, got …`. */
function mismatch(value: unknown, shape: Shape, path: string): string | undefined {
  const at = path === '' ? '' : `${path}: `;
  if (shape === 'string') return typeof value === 'string' ? undefined : `${at}expected a string, got ${describe(value)}`;
  if (shape === 'number' || shape === 'figure') {
    if (typeof value === 'number' && Number.isFinite(value)) return undefined;
    return shape === 'figure' && value === null ? undefined : `${at}expected a number, got ${describe(value)}`;
  }
  if (Array.isArray(shape)) {
    if (!Array.isArray(value)) return `${at}expected a list, got ${describe(value)}`;
    for (const [i, item] of value.entries()) {
      const p = mismatch(item, shape[0], `${path}[${i}]`);
      if (p !== undefined) return p;
    }
    return undefined;
  }
  if (!isObject(value)) return `${at}expected an object, got ${describe(value)}`;
  for (const [key, inner] of Object.entries(shape)) {
    const p = mismatch(value[key], inner, path === '' ? key : `${path}.${key}`);
    if (p !== undefined) return p;
  }
  return undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === undefined) return 'nothing (the field is missing)';
  if (Array.isArray(v)) return 'a list';
  if (isObject(v)) return 'an object';
  const text = JSON.stringify(v);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}
