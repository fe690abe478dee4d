import { SHED_REASONS } from '../engine/errors.js';
import type { ResultFile } from '../run/metrics/result.js';
import { round6 } from '../run/metrics/round.js';

/**
 * The order keys are written in, wherever they appear: the order the schema types declare
 * them (one list serves every object because the per-type orders agree). Keys not listed
 * follow, sorted. Integer-like keys (`"200"`, `"429"`) always come first in ascending order:
 * JavaScript objects keep them so, and that is stable too.
 */
const KEY_ORDER = [
  'schema',
  'scenario',
  'seed',
  'mode',
  'partial',
  'kind',
  'name',
  'layer',
  't',
  'durationMs',
  'progress',
  'binMs',
  'fromBin',
  'logicalCalls',
  'attempts',
  'retries',
  'amplification',
  'amplificationLast5s',
  'goodput',
  'offered',
  'ok',
  'late',
  'failed',
  'unfinished',
  'successRate',
  'p50',
  'p95',
  'p99',
  'max',
  'latencyMs',
  'shed',
  'roots',
  'layers',
  'upstream',
  'status',
  'rateLimited',
  'requests',
  'tokens',
  'quota',
  'share',
  '5xx',
  'reset',
  'timeout',
  'other',
  'wastedTokens',
  'tokensServed',
  'models',
  'recoveryMs',
  'series',
  'upstreamAttempts',
  'leafCalls',
  'status429',
  'status5xx',
  'timeouts',
  'faultActive',
  'engine',
  'dropProbability',
  'budgetBalance',
  'breakerOpen',
  'wallMs',
  'attemptsPerSec',
  'events',
  'eventsPerSec',
  'variants',
  'checks',
  'notes',
  'variant',
  'count',
  'reason',
  'drainMs',
  'stoppedAtMs',
  'group',
  'actual',
  'expected',
  'message',
  'timing',
  ...SHED_REASONS,
];
const RANK = new Map(KEY_ORDER.map((k, i) => [k, i]));

function compareKeys(a: string, b: string): number {
  const ra = RANK.get(a) ?? Infinity;
  const rb = RANK.get(b) ?? Infinity;
  if (ra !== rb) return ra - rb;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The key whose value `canonical` leaves as it is. */
const VERBATIM = 'effective';

/**
 * A copy with keys in canonical order and every non-integer number rounded to 6 significant
 * digits — except a variant's `effective` scenario, written as it ran: its document's key
 * order (the order of its variants, say) and its numbers are what a rerun of it reads.
 */
function canonical(value: unknown): unknown {
  if (typeof value === 'number') return round6(value);
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort(compareKeys)) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = key === VERBATIM ? v : canonical(v);
  }
  return out;
}

/**
 * JSON with 2-space indent, except that arrays of plain values (the per-second series) stay
 * on one line: a ten-minute run is then ten lines per series, not six thousand.
 */
function write(value: unknown, indent: string): string {
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.every((v) => v === null || typeof v !== 'object'))
      return `[${value.map((v) => JSON.stringify(v) ?? 'null').join(', ')}]`;
    return `[\n${value.map((v) => inner + write(v, inner)).join(',\n')}\n${indent}]`;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 0) return '{}';
    return `{\n${entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${write(v, inner)}`).join(',\n')}\n${indent}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The result file as JSON: canonical key order, 2-space indent (series arrays on one line),
 * trailing newline. The same input gives the same bytes on every platform (floats rounded
 * to 6 significant digits) and `JSON.parse` reads it back unchanged.
 */
export function resultJson(file: ResultFile): string {
  return `${write(canonical(file), '')}\n`;
}
