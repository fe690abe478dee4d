import { describe, expect, it } from 'vitest';
import { ADAPTIVE_THROTTLE_DEFAULTS } from '../../src/engine/adaptive-throttle.js';
import { BACKOFF_DEFAULTS } from '../../src/engine/backoff.js';
import { resolveCircuitBreakerOptions } from '../../src/engine/circuit-breaker.js';
import { ENGINE_PROFILES } from '../../src/engine/engine-profiles.js';
import { coreOf, Guard } from '../../src/engine/guard.js';
import type { GuardCore } from '../../src/engine/guard-core.js';
import { ManualClock } from '../../src/engine/manual-clock.js';
import { withDefaults } from '../../src/engine/options.js';
import { SeededRandom } from '../../src/engine/random.js';
import { RETRY_BUDGET_DEFAULTS } from '../../src/engine/retry-budget.js';
import { createHttpGuard } from '../../src/integrations/engine-http-options.js';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import type { EngineConfig } from '../../src/traffic/config.js';
import { engineGuard, resolveEngine } from '../../src/traffic/engine-guard.js';

// The engine a scenario simulates is the engine that ships: an `engine` layer left to its
// defaults is built with exactly the options guardedFetch and the interceptor build their
// Guard with, and `profile: core` with exactly `new Guard()`'s.

/** A scenario's `engine:` block as the loader makes it from `yaml` (a mapping's body). */
function block(yaml = '{}'): EngineConfig {
  return loadScenario(`
name: p
duration: 1s
arrival: { type: constant, rate: 1 }
tokens: { prompt: 10, completion: 10 }
layers: [{ name: llm, retry: { policy: engine } }]
engine: ${yaml}
upstream: { models: [{ name: m, slots: 1, queue: 0, ttft: 1ms, tpot: 0ms }] }
`).traffic.engine;
}

/**
 * Every option a Guard runs with, apart from where its time, randomness and name come from,
 * with each primitive's own defaults filled in (as its constructor fills them).
 */
function optionsOf(g: GuardCore) {
  const { clock: _c, random: _r, name: _n, targets: _t, ...rest } = g.options;
  const fill = <T extends object>(defaults: T, o: Partial<T> | false) =>
    o === false ? false : withDefaults(defaults, o);
  return {
    ...rest,
    backoff: withDefaults(BACKOFF_DEFAULTS, rest.backoff),
    retryBudget: fill(RETRY_BUDGET_DEFAULTS, rest.retryBudget),
    throttle: fill(ADAPTIVE_THROTTLE_DEFAULTS, rest.throttle),
    breaker: rest.breaker === false ? false : resolveCircuitBreakerOptions(rest.breaker),
  };
}

function simulated(base: EngineConfig, over: Partial<EngineConfig> = {}): GuardCore {
  return engineGuard(base, over, 'llm', ['default'], new ManualClock(0), new SeededRandom(1));
}

describe('engine profiles', () => {
  it('an engine layer by default runs with what guardedFetch and the interceptor ship', () => {
    const http = createHttpGuard({ clock: new ManualClock(0), random: new SeededRandom(1) });
    expect(optionsOf(simulated(block()))).toEqual(optionsOf(coreOf(http.guard)));
    expect(optionsOf(simulated(block())).breaker).toMatchObject({ failureRatio: 0.8, throttledRatio: 0.8 });
    // The stream guard's and the answer's waits too.
    const e = resolveEngine(block(), {});
    expect(e.stream).toEqual({
      commit: http.stream!.commit,
      resume: http.stream!.resume,
      firstTokenMs: http.stream!.firstTokenMs,
      idleMs: http.stream!.idleMs,
      headersMs: http.stream!.headersTimeoutMs,
    });
    expect(e.headersTimeoutMs).toBe(http.headersTimeoutMs);
    expect(http.stream!.commit).toBe(ENGINE_PROFILES.http.stream.commit);
  });

  it('profile: core is new Guard() as stormlab/engine ships it, by the block or by one layer', () => {
    const core = coreOf(new Guard({ clock: new ManualClock(0), random: new SeededRandom(1) }));
    expect(optionsOf(simulated(block('{ profile: core }')))).toEqual(optionsOf(core));
    const layer = simulated(block(), { profile: 'core' });
    expect(layer.budget).toBeDefined();
    expect(optionsOf(layer)).toEqual(optionsOf(core));
  });

  it('what a scenario sets is merged over its profile, a layer option by option over the block', () => {
    const b = block('{ profile: core, breaker: { failureRatio: 0.6 }, throttle: false }');
    const e = resolveEngine(b, { breaker: { openMs: 1_000 }, throttle: { windowMs: 10_000 } });
    expect(e.breaker).toEqual({ failureRatio: 0.6, throttledRatio: 0.5, openMs: 1_000 });
    // Off in the block, on again in the layer: the profile's K under the layer's window.
    expect(e.throttle).toEqual({ k: 2, windowMs: 10_000 });
    expect(resolveEngine(b, { breaker: false }).breaker).toBe(false);
    expect(resolveEngine(block(), { retryBudget: { minRetriesPerSec: 5 } }).retryBudget).toEqual({
      ratio: 0.5,
      minRetriesPerSec: 5,
    });
  });

  it('a profile name the engine does not have is refused with the names it has', () => {
    expect(() => block('{ profile: shipped }')).toThrow(/engine\.profile: expected one of http, core, got "shipped"/);
  });
});
