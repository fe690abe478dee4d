import { OptionError } from '../engine/errors.js';
import { parseDuration } from '../upstream/duration.js';
import type { FaultKind, FaultPhase } from '../upstream/config.js';

/**
 * A fault phase as the fake upstream serves it: the model's, plus `retryAfterMs` — the
 * `retry-after` / `retry-after-ms` hint an `errors` or `outage` answer carries (the model
 * gives injected errors none; real providers often send one on 429 and 503).
 */
export interface ServedFault extends FaultPhase {
  retryAfterMs?: number;
  /** The `x-should-retry` header an `errors` or `outage` answer carries (`true` / `false`); none when absent. */
  shouldRetry?: boolean;
}

/**
 * A phase as the control API and `setFaults` take it: `fromMs` defaults to 0, `toMs` to
 * forever (absent or null), `rate` to 1. Times are ms relative to `relativeTo`.
 */
export interface FaultPhaseInput {
  kind: FaultKind;
  fromMs?: number;
  toMs?: number | null;
  model?: string;
  /** Only requests on this route (`/v1/chat/completions`). */
  route?: string;
  rate?: number;
  status?: number | Record<string, number>;
  factor?: number;
  /** Time added: ms (or a duration like "1s"), or a distribution of ms (`{"dist": "uniform", "min": 100, "max": 900}`). */
  addMs?: number | string | object;
  retryAfterMs?: number;
  shouldRetry?: boolean;
  ttftMs?: number;
  afterTokens?: number;
  /** A `stall`'s length; absent or null: forever. */
  stallMs?: number | null;
  mode?: 'finish' | 'reject';
  contextTokens?: number;
}

/** What fault times count from: the moment the phases are set, or the server's start. */
export type RelativeTo = 'now' | 'start';

const FIELDS = [
  'kind',
  'fromMs',
  'toMs',
  'model',
  'route',
  'rate',
  'status',
  'factor',
  'addMs',
  'retryAfterMs',
  'shouldRetry',
  'ttftMs',
  'afterTokens',
  'stallMs',
  'mode',
  'contextTokens',
];

/**
 * Reads the body of `PUT /_stormlab/faults`: a list of phases, or `{ faults: [...],
 * relativeTo: 'now' | 'start' }` (default `now`). Returns the phases on the server's own
 * timeline (ms since it started) and what they were relative to. Shapes are checked here —
 * unknown fields, wrong types, times — and the ranges by the model's `FaultTimeline` when they
 * are installed; either way an `OptionError` names the phase and the field.
 */
export function parseFaultBody(body: unknown, now: number): ServedFault[] {
  if (Array.isArray(body)) return absolutePhases(body, 'now', now);
  if (body === null || typeof body !== 'object' || !Array.isArray((body as { faults?: unknown }).faults)) {
    throw new OptionError(
      `expected a list of fault phases, or {"faults": [...], "relativeTo": "now" | "start"}, got ${describe(body)}`,
    );
  }
  const { faults, relativeTo = 'now', ...rest } = body as { faults: unknown[]; relativeTo?: unknown };
  const extra = Object.keys(rest);
  if (extra.length > 0)
    throw new OptionError(`unknown field ${JSON.stringify(extra[0])} (expected faults and relativeTo)`);
  if (relativeTo !== 'now' && relativeTo !== 'start')
    throw new OptionError(`relativeTo must be "now" or "start", got ${describe(relativeTo)}`);
  return absolutePhases(faults, relativeTo, now);
}

/** Phases given relative to `relativeTo`, on the server's timeline (`now` = ms since start). */
export function absolutePhases(list: readonly unknown[], relativeTo: RelativeTo, now: number): ServedFault[] {
  const shift = relativeTo === 'now' ? now : 0;
  return list.map((p, i) => phase(p, i, shift));
}

function phase(p: unknown, i: number, shift: number): ServedFault {
  const name = `faults[${i}]`;
  if (p === null || typeof p !== 'object' || Array.isArray(p))
    throw new OptionError(`${name} must be an object like {"kind": "outage", "toMs": 10000}, got ${describe(p)}`);
  const f = p as Record<string, unknown>;
  const unknown = Object.keys(f).find((k) => !FIELDS.includes(k));
  if (unknown !== undefined)
    throw new OptionError(`${name} has an unknown field ${JSON.stringify(unknown)} (known: ${FIELDS.join(', ')})`);
  // Times as a scenario writes them: ms, or a string with units ("10s", "1m30s").
  const from = f.fromMs === undefined ? 0 : parseDuration(f.fromMs);
  const to = f.toMs === undefined || f.toMs === null || f.toMs === Infinity ? Infinity : parseDuration(f.toMs);
  if (from === undefined || !Number.isFinite(from))
    throw new OptionError(`${name}.fromMs must be a duration like 10s or a number of ms, got ${describe(f.fromMs)}`);
  if (to === undefined)
    throw new OptionError(
      `${name}.toMs must be a duration like 10s, a number of ms or null (forever), got ${describe(f.toMs)}`,
    );
  if (!(to > from)) throw new OptionError(`${name}.toMs must be after fromMs (${from}), got ${to}`);
  if (f.model !== undefined && typeof f.model !== 'string')
    throw new OptionError(`${name}.model must be a model name, got ${describe(f.model)}`);
  if (
    f.status !== undefined &&
    typeof f.status !== 'number' &&
    (f.status === null || typeof f.status !== 'object' || Array.isArray(f.status))
  ) {
    throw new OptionError(
      `${name}.status must be a status like 503 or weights by status like {"503": 0.7, "429": 0.3}, got ${describe(f.status)}`,
    );
  }
  const retry = f.retryAfterMs === undefined ? undefined : parseDuration(f.retryAfterMs);
  if (f.retryAfterMs !== undefined && !(retry !== undefined && Number.isFinite(retry))) {
    throw new OptionError(
      `${name}.retryAfterMs must be a duration like 20ms or a number of ms >= 0, got ${describe(f.retryAfterMs)}`,
    );
  }
  if (f.shouldRetry !== undefined && typeof f.shouldRetry !== 'boolean')
    throw new OptionError(`${name}.shouldRetry must be true or false, got ${describe(f.shouldRetry)}`);
  // A constant added time may be written as a duration ("1s"); a distribution's numbers are ms.
  const add = typeof f.addMs === 'string' ? parseDuration(f.addMs) : f.addMs;
  if (typeof f.addMs === 'string' && (add === undefined || !Number.isFinite(add)))
    throw new OptionError(
      `${name}.addMs must be a duration like 500ms, ms, or a distribution of ms, got ${describe(f.addMs)}`,
    );
  const { stallMs, addMs: _add, ...fields } = f;
  const out: ServedFault = {
    ...(fields as unknown as ServedFault),
    ...(add === undefined ? {} : { addMs: add as ServedFault['addMs'] }),
    // A stall without end is written as no stallMs (JSON has no Infinity).
    ...(stallMs === null || stallMs === undefined ? {} : { stallMs: stallMs as number }),
    fromMs: from + shift,
    toMs: to + shift,
    ...(retry === undefined ? {} : { retryAfterMs: retry }),
    rate: (f.rate as number | undefined) ?? 1,
  };
  return out;
}

/** Phases as JSON shows them: `toMs: null` for a phase without end. */
export function faultsJson(phases: readonly ServedFault[]): object[] {
  return phases.map((p) => ({ ...p, toMs: p.toMs === Infinity ? null : p.toMs }));
}

function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (Array.isArray(v)) return 'a list';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'an object' : JSON.stringify(v);
}
