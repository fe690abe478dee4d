import type { Clock } from '../engine/clock.js';
import { GuardCore } from '../engine/guard-core.js';
import type { SeededRandom } from '../engine/random.js';
import type { StateStore } from '../engine/store.js';
import type { EngineConfig } from './config.js';

/**
 * The engine of one layer: the scenario's `engine:` defaults with the layer's own overrides on
 * top. Throws the engine's `OptionError` for settings that do not fit together (a breaker's
 * `maxOpenMs` below its `openMs`): scenario validation calls it too, so that is a message
 * naming the setting before the run, not a crash in it. `store` is where its state lives (a
 * store shared by a layer's replicas); without one the guard keeps its own.
 */
export function engineGuard(
  base: EngineConfig,
  over: Partial<EngineConfig>,
  name: string,
  targets: string[],
  clock: Clock,
  random: SeededRandom,
  store?: StateStore,
): GuardCore {
  const e = { ...base, ...over };
  return new GuardCore({
    clock,
    random: random.split('engine'),
    name,
    targets,
    ...(store === undefined ? {} : { store }),
    maxAttempts: e.maxAttempts,
    backoff: e.backoff,
    retryBudget: e.retryBudget,
    throttle: e.throttle,
    breaker: e.breaker,
    limits: e.limits,
    concurrency: false,
    minAttemptMs: e.minAttemptMs,
  });
}
