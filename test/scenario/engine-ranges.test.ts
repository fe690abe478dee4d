import { describe, expect, it } from 'vitest';
import { ADAPTIVE_THROTTLE_RANGES, AdaptiveThrottle } from '../../src/engine/adaptive-throttle.js';
import { BACKOFF_RANGES, Backoff } from '../../src/engine/backoff.js';
import { CIRCUIT_BREAKER_RANGES, resolveCircuitBreakerOptions } from '../../src/engine/circuit-breaker.js';
import { CONCURRENCY_LIMITER_RANGES, ConcurrencyLimiter } from '../../src/engine/concurrency-limiter.js';
import { OptionError } from '../../src/engine/errors.js';
import { GUARD_RANGES, resolveGuardOptions } from '../../src/engine/guard-options.js';
import { ManualClock } from '../../src/engine/manual-clock.js';
import { type Range, rangeText } from '../../src/engine/options.js';
import { SeededRandom } from '../../src/engine/random.js';
import { RETRY_BUDGET_RANGES, RetryBudget } from '../../src/engine/retry-budget.js';
import { durationRangeText } from '../../src/scenario/duration.js';
import { edit, problemsOf } from './helpers.js';

type Build = (options: Record<string, number>) => unknown;
const random = new SeededRandom(1);

/**
 * Each engine range table, where its options sit in a scenario's `engine:` block ('' = the
 * block itself), and the engine code that checks it.
 */
const TABLES: Array<[string, Readonly<Record<string, Range>>, Build]> = [
  ['retryBudget', RETRY_BUDGET_RANGES, (o) => new RetryBudget(o)],
  ['throttle', ADAPTIVE_THROTTLE_RANGES, (o) => new AdaptiveThrottle(o, random)],
  ['breaker', CIRCUIT_BREAKER_RANGES, (o) => resolveCircuitBreakerOptions(o)],
  ['concurrency', CONCURRENCY_LIMITER_RANGES, (o) => new ConcurrencyLimiter(o)],
  ['backoff', BACKOFF_RANGES, (o) => new Backoff(o, random)],
  [
    '',
    { maxAttempts: GUARD_RANGES.maxAttempts, minAttemptMs: GUARD_RANGES.minAttemptMs },
    (o) => resolveGuardOptions({ clock: new ManualClock(0), random, ...o }),
  ],
];
const TRIP_RATIOS = ['failureRatio', 'slowCallRatio', 'throttledRatio'];

/** Values just outside `range` (below its low end, above its high end, a fraction for an integer). */
function outside(range: Range): number[] {
  const out = [range.above ? range.min : range.min - 1];
  if (range.max !== undefined) out.push(range.max + 1);
  if (range.integer) out.push(range.min + 0.5);
  return out;
}

const cases = TABLES.flatMap(([block, ranges, build]) =>
  Object.entries(ranges).flatMap(([key, range]) =>
    outside(range).map((value) => ({ block, key, range, build, value, path: block === '' ? key : `${block}.${key}` })),
  ),
);

describe('engine option ranges: one table, checked by the engine and the scenario schema alike', () => {
  it.each(cases)('$path = $value: the schema refuses it in the engine table’s words, and so does the engine', (c) => {
    // A duration below 0 cannot be written in a scenario; the engine still refuses it.
    if (c.value >= 0) {
      const text = c.key.endsWith('Ms') ? durationRangeText(c.range) : rangeText(c.range);
      const or = TRIP_RATIOS.includes(c.key) ? ', or false' : '';
      const inner = c.block === '' ? `${c.key}: ${c.value}` : `${c.block}: { ${c.key}: ${c.value} }`;
      const problems = problemsOf(edit('upstream:', `engine: { ${inner} }\nupstream:`));
      expect(problems).toEqual([`engine.${c.path}: expected ${text}${or}, got ${c.value}`]);
    }
    let thrown: unknown;
    try {
      c.build({ [c.key]: c.value });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(OptionError);
    // The table's range, or (capMs, maxOpenMs) the same raised to another option's value.
    const { range } = thrown as OptionError;
    expect(range === c.range || (range?.min ?? -1) > c.range.min).toBe(true);
    expect((thrown as OptionError).value).toBe(c.value);
  });
});
