import { withCommas } from '../report/format.js';
import type { SweepParam } from '../report/sweep-file.js';
import { formatDuration, parseDuration } from '../scenario/duration.js';
import { assignmentAt, parsePath, parseSetText } from '../scenario/set-override.js';
import { SweepError } from './sweep-error.js';

/** Points a sweep runs at most: 10,000 brownout runs are already hours on two cores. */
export const MAX_POINTS = 10_000;

export type ParamValue = number | string | boolean;

/** A swept parameter with each value's text as it goes into `--set path=text`. */
export interface SweepParamSpec extends SweepParam {
  texts: string[];
}

/**
 * Parses `--param path=v1,v2,…` flags. A value reads as `--set` reads it (YAML: `1.5` a
 * number, `true` a boolean, `500ms` or `engine` a string); `low:high:step` is a range
 * (`1:3:0.5` = 1, 1.5, 2, 2.5, 3; durations too: `100ms:1s:300ms`). Every problem is
 * collected, one line each, before throwing a `SweepError`; so is a grid over `MAX_POINTS`.
 */
export function parseSweepParams(flags: readonly string[]): SweepParamSpec[] {
  if (flags.length === 0)
    throw new SweepError(['--param: give at least one parameter to sweep, like --param engine.throttle.k=1.5,2,3']);
  const problems: string[] = [];
  const params: SweepParamSpec[] = [];
  for (const flag of flags) {
    const p = parseParam(flag, problems);
    if (p === undefined) continue;
    if (params.some((q) => q.path === p.path))
      problems.push(`--param ${p.path} is given twice: list all its values in one --param`);
    else params.push(p);
  }
  if (problems.length > 0) throw new SweepError(problems);
  const size = gridSize(params);
  if (size > MAX_POINTS) {
    const counts = params.map((p) => withCommas(p.values.length)).join(' × ');
    throw new SweepError([
      `--param: ${counts} = ${withCommas(size)} points, more than a sweep runs (${withCommas(MAX_POINTS)}); give fewer values`,
    ]);
  }
  return params;
}

function parseParam(flag: string, problems: string[]): SweepParamSpec | undefined {
  const eq = assignmentAt(flag);
  const path = eq < 0 ? '' : flag.slice(0, eq).trim();
  if (eq < 0) {
    problems.push(`--param ${JSON.stringify(flag)}: expected path=v1,v2,… like engine.throttle.k=1.5,2,3`);
    return undefined;
  }
  const parsed = parsePath(path);
  if (!parsed.ok) {
    problems.push(`--param ${JSON.stringify(flag)}: ${parsed.message}`);
    return undefined;
  }
  const before = problems.length;
  const spec: SweepParamSpec = { path, values: [], texts: [] };
  for (const item of flag.slice(eq + 1).split(',')) addItem(spec, item.trim(), flag.slice(eq + 1), problems);
  return problems.length > before ? undefined : spec;
}

/** One comma-separated item: a value or a range, appended with its text; a problem names the param. */
function addItem(spec: SweepParamSpec, item: string, list: string, problems: string[]): void {
  const at = `--param ${spec.path}`;
  if (item === '') {
    problems.push(`${at}: empty value in ${JSON.stringify(list)} (values are separated by commas)`);
    return;
  }
  const range = /^([^:]+):([^:]+):([^:]+)$/.exec(item);
  const texts = range === null ? [item] : expandRange(at, item, range.slice(1), problems);
  for (const text of texts) {
    const value = readValue(at, spec.path, text, problems);
    if (value === undefined) continue;
    if (spec.values.includes(value)) problems.push(`${at}: ${text} is given twice`);
    else {
      spec.values.push(value);
      spec.texts.push(text);
    }
  }
}

/** A value as `--set` reads it; lists, mappings and null (which removes the key) are not values to sweep. */
function readValue(at: string, path: string, text: string, problems: string[]): ParamValue | undefined {
  const r = parseSetText(`${path}=${text}`);
  if (!r.ok) {
    problems.push(`${at}: ${JSON.stringify(text)}: ${r.message}`);
    return undefined;
  }
  const v = r.override.value;
  if (typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') return v;
  problems.push(`${at}: ${JSON.stringify(text)}: expected a number, a duration, true/false or a word`);
  return undefined;
}

/**
 * `low:high:step` as texts: numbers (`1:3:0.5`), or durations with units (`100ms:1s:300ms`,
 * written back as `100ms`, `400ms`, …). The last value is the last step not past `high`.
 */
function expandRange(at: string, item: string, parts: string[], problems: string[]): string[] {
  const numeric = parts.every((p) => /^\s*-?(\d+(\.\d*)?|\.\d+)(e-?\d+)?\s*$/i.test(p));
  const durations = !numeric && parts.every((p) => /[a-z]/i.test(p) && parseDuration(p.trim()) !== undefined);
  if (!numeric && !durations) {
    problems.push(
      `${at}: range ${JSON.stringify(item)}: expected low:high:step as numbers (1:3:0.5) or durations (100ms:1s:100ms)`,
    );
    return [];
  }
  const [lo, hi, step] = parts.map((p) => (numeric ? Number(p) : parseDuration(p.trim())!));
  const why = step <= 0 ? 'the step must be above 0' : hi < lo ? 'it goes down: write low:high:step' : undefined;
  const count = why === undefined ? Math.floor((hi - lo) / step + 1e-9) + 1 : 0;
  if (why === undefined && count > MAX_POINTS)
    problems.push(
      `${at}: range ${JSON.stringify(item)} has ${withCommas(count)} values, more than a sweep runs (${withCommas(MAX_POINTS)})`,
    );
  if (why !== undefined) problems.push(`${at}: range ${JSON.stringify(item)}: ${why}`);
  if (why !== undefined || count > MAX_POINTS) return [];
  // 12 significant digits: 0.1 + 2 × 0.1 is 0.30000000000000004, which nobody typed.
  const values = Array.from({ length: count }, (_, i) => Number((lo + i * step).toPrecision(12)));
  return values.map((v) => (numeric ? String(v) : formatDuration(v)));
}

/** Points in the grid: the product of the value counts. */
export function gridSize(params: readonly SweepParam[]): number {
  return params.reduce((n, p) => n * p.values.length, 1);
}

/** Every combination of value indexes, row-major: the last parameter varies fastest. */
export function expandGrid(params: readonly SweepParam[]): number[][] {
  return params.reduce<number[][]>((rows, p) => rows.flatMap((r) => p.values.map((_, i) => [...r, i])), [[]]);
}

/** A point's `--set` texts: `engine.throttle.k=1.5`, one per parameter. */
export function pointSets(params: readonly SweepParamSpec[], indexes: readonly number[]): string[] {
  return params.map((p, i) => `${p.path}=${p.texts[indexes[i]]}`);
}
