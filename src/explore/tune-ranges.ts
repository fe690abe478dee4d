import { ADAPTIVE_THROTTLE_DEFAULTS } from '../engine/adaptive-throttle.js';
import { BACKOFF_DEFAULTS } from '../engine/backoff.js';
import { CIRCUIT_BREAKER_DEFAULTS } from '../engine/circuit-breaker.js';
import { CONCURRENCY_LIMITER_DEFAULTS } from '../engine/concurrency-limiter.js';
import { RETRY_BUDGET_DEFAULTS } from '../engine/retry-budget.js';
import { ENGINE_DEFAULTS } from '../scenario/engine-schema.js';

/** A built-in range for an engine knob, and the value the engine uses when a scenario gives none. */
export interface KnobRange {
  min: number;
  max: number;
  scale?: 'linear' | 'log';
  integer?: boolean;
  /** A duration in ms, written back like `2s`. */
  duration?: boolean;
  /**
   * The primitive's own default, for a knob no engine profile sets (`ENGINE_PROFILES` decides
   * the rest: `tune-current.ts`); `null` when the default is "off" (`slowCallRatio: false`).
   */
  fallback: number | null;
}

const log = 'log' as const;
const t = ADAPTIVE_THROTTLE_DEFAULTS;
const b = CIRCUIT_BREAKER_DEFAULTS;
const r = RETRY_BUDGET_DEFAULTS;
const ratio = (v: number | false): number | null => (v === false ? null : v);

/**
 * Sensible search ranges for the engine's knobs, by their path under `engine:` (the same under
 * a layer's `retry.engine:`). They stay inside the schema's limits and keep pairs that must be
 * ordered apart (backoff base below cap, breaker open below max open), so any mix is valid.
 * Log scales where the knob's effect is multiplicative (a budget of 1 % vs 2 % differs as much
 * as 20 % vs 40 %).
 */
export const KNOB_RANGES: Readonly<Record<string, KnobRange>> = Object.freeze({
  maxAttempts: { min: 1, max: 5, integer: true, fallback: ENGINE_DEFAULTS.maxAttempts },
  'backoff.baseMs': { min: 50, max: 2_000, scale: log, duration: true, fallback: BACKOFF_DEFAULTS.baseMs },
  'backoff.capMs': { min: 2_000, max: 60_000, scale: log, duration: true, fallback: BACKOFF_DEFAULTS.capMs },
  'backoff.multiplier': { min: 1, max: 4, fallback: BACKOFF_DEFAULTS.multiplier },
  'retryBudget.ratio': { min: 0.01, max: 0.5, scale: log, fallback: r.ratio },
  'retryBudget.minRetriesPerSec': { min: 0, max: 10, fallback: r.minRetriesPerSec },
  'retryBudget.windowMs': { min: 1_000, max: 60_000, scale: log, duration: true, fallback: r.windowMs },
  'throttle.k': { min: 1, max: 4, fallback: t.k },
  'throttle.maxDropProbability': { min: 0.1, max: 1, fallback: t.maxDropProbability },
  'throttle.windowMs': { min: 10_000, max: 300_000, scale: log, duration: true, fallback: t.windowMs },
  'throttle.minRequests': { min: 0, max: 50, integer: true, fallback: t.minRequests },
  'breaker.failureRatio': { min: 0.2, max: 0.9, fallback: ratio(b.failureRatio) },
  'breaker.throttledRatio': { min: 0.2, max: 0.9, fallback: ratio(b.throttledRatio) },
  'breaker.slowCallRatio': { min: 0.2, max: 0.9, fallback: ratio(b.slowCallRatio) },
  'breaker.slowCallMs': { min: 1_000, max: 60_000, scale: log, duration: true, fallback: b.slowCallMs },
  'breaker.openMs': { min: 1_000, max: 30_000, scale: log, duration: true, fallback: b.openMs },
  'breaker.maxOpenMs': { min: 30_000, max: 300_000, scale: log, duration: true, fallback: b.maxOpenMs },
  'breaker.openBackoffMultiplier': { min: 1, max: 4, fallback: b.openBackoffMultiplier },
  'breaker.minimumCalls': { min: 5, max: 100, scale: log, integer: true, fallback: b.minimumCalls },
  'breaker.windowMs': { min: 5_000, max: 120_000, scale: log, duration: true, fallback: b.windowMs },
  'breaker.halfOpenProbes': { min: 1, max: 10, integer: true, fallback: b.halfOpenProbes },
  'concurrency.maxInFlight': {
    min: 4,
    max: 256,
    scale: log,
    integer: true,
    fallback: CONCURRENCY_LIMITER_DEFAULTS.maxInFlight,
  },
  'concurrency.maxQueue': { min: 0, max: 1_000, integer: true, fallback: CONCURRENCY_LIMITER_DEFAULTS.maxQueue },
  'concurrency.maxWaitMs': { min: 0, max: 30_000, duration: true, fallback: CONCURRENCY_LIMITER_DEFAULTS.maxWaitMs },
  minAttemptMs: { min: 0, max: 5_000, duration: true, fallback: ENGINE_DEFAULTS.minAttemptMs },
});

/** `engine.throttle.k`, `layers[2].retry.engine.throttle.k` → `throttle.k`; other paths → undefined. */
export function knobOf(path: string): string | undefined {
  const m = /(?:^|\.)engine\.(.+)$/.exec(path);
  return m === null ? undefined : m[1];
}
