import { parseDuration } from '../scenario/duration.js';
import { assignmentAt, parsePath, splitOutsideQuotes } from '../scenario/set-override.js';
import { closest } from '../scenario/suggest.js';
import type { Dimension } from './dimension.js';
import { TuneError } from './tune-error.js';
import { KNOB_RANGES, knobOf, type KnobRange } from './tune-ranges.js';

/** One tuned parameter: a `--set` path and the range searched. Its `name` is the path. */
export interface TuneParam extends Dimension {
  path: string;
  /** A duration in ms, written back like `2s`. */
  duration: boolean;
  /** The built-in range was used (no range given). */
  builtIn: boolean;
}

const NUMBER = /^-?(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?$/i;
const FLAGS = ['int', 'log', 'linear'] as const;

/**
 * `--params engine.throttle.k,engine.retryBudget.ratio=0.02:0.4:log,layers[2].timeout=5s:20s`:
 * each a `--set` path, with a range `low:high` (numbers, or durations like `500ms:5s`) and
 * optional `:int` / `:log` / `:linear`; without a range an engine knob takes its built-in one.
 */
export function parseTuneParams(text: string): TuneParam[] {
  const items = splitOutsideQuotes(text, ',').map((s) => s.trim());
  if (items.length === 0 || items.some((s) => s === ''))
    throw new TuneError(
      `expected a comma-separated list of --set paths like engine.throttle.k,engine.retryBudget.ratio, got ${JSON.stringify(text)}`,
    );
  const params = items.map(parseParam);
  const seen = new Set<string>();
  for (const p of params) {
    if (seen.has(p.path)) throw new TuneError(`${p.path} is listed twice`);
    seen.add(p.path);
  }
  return params;
}

function parseParam(item: string): TuneParam {
  const eq = assignmentAt(item);
  const path = (eq < 0 ? item : item.slice(0, eq)).trim();
  const parsed = parsePath(path);
  if (!parsed.ok) throw new TuneError(parsed.message);
  const knob = knobOf(path);
  const known = knob === undefined ? undefined : KNOB_RANGES[knob];
  if (eq >= 0) return parseRange(path, item.slice(eq + 1).trim(), known);
  if (known === undefined) throw new TuneError(noRange(path, knob));
  return {
    name: path,
    path,
    min: known.min,
    max: known.max,
    scale: known.scale ?? 'linear',
    integer: known.integer ?? false,
    duration: known.duration ?? false,
    builtIn: true,
  };
}

/** Why a path needs a range, with a did-you-mean when it looks like a misspelt engine knob. */
function noRange(path: string, knob: string | undefined): string {
  const names = Object.keys(KNOB_RANGES);
  const last = (knob ?? path).split('.').at(-1)!;
  const hint =
    knob === undefined ? undefined : (closest(knob, names) ?? names.find((n) => n.split('.').at(-1) === last));
  const engine = hint === undefined ? '' : ` (did you mean engine.${hint}?)`;
  const give = `give a range, like ${path}=1:10 (add :int or :log; durations like 1s:30s)`;
  return knob === undefined
    ? `${path}: ${give}`
    : `${path}${engine}: no built-in range for it; ${give}. Engine knobs with one: ${names.join(', ')}`;
}

/**
 * A range as written. An engine knob keeps what its built-in range knows: whole numbers for a
 * whole-number knob, durations for a duration, and its log scale unless `:linear` is given.
 */
function parseRange(path: string, text: string, known: KnobRange | undefined): TuneParam {
  const parts = text.split(':').map((s) => s.trim());
  const flags = parts.slice(2);
  const bad = flags.find((f) => !(FLAGS as readonly string[]).includes(f));
  if (parts.length < 2 || bad !== undefined) {
    throw new TuneError(
      `${path}=${text}: expected a range low:high, optionally :int or :log, like ${path}=1:4 or ${path}=0.01:0.5:log${bad ? ` (unknown ${JSON.stringify(bad)})` : ''}`,
    );
  }
  const duration =
    known === undefined ? parts.slice(0, 2).some((p) => p !== '' && !NUMBER.test(p)) : (known.duration ?? false);
  const end = (s: string): number => {
    const v = duration ? parseDuration(s) : NUMBER.test(s) ? Number(s) : undefined;
    if (v === undefined)
      throw new TuneError(
        `${path}=${text}: ${JSON.stringify(s)} is not ${duration ? 'a duration like 500ms or 2s' : 'a number'}`,
      );
    return v;
  };
  const [min, max] = [end(parts[0]), end(parts[1])];
  const integer = flags.includes('int') || (known?.integer ?? false);
  const scale = flags.includes('log') || (known?.scale === 'log' && !flags.includes('linear')) ? 'log' : 'linear';
  if (!(min < max)) throw new TuneError(`${path}=${text}: the low end must be below the high end`);
  if (scale === 'log' && min <= 0)
    throw new TuneError(
      `${path}=${text}: a log range must be above 0${flags.includes('log') ? '' : ` (${knobOf(path)} is searched on a log scale; add :linear for an even one)`}`,
    );
  if (integer && !(Number.isInteger(min) && Number.isInteger(max)))
    throw new TuneError(
      `${path}=${text}: ${flags.includes('int') ? 'an :int range' : `${knobOf(path)} is a whole number, so its range`} needs whole ends`,
    );
  return { name: path, path, min, max, scale, integer, duration, builtIn: false };
}
