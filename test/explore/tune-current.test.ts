import { describe, expect, it } from 'vitest';
import { currentValue } from '../../src/explore/tune-current.js';
import type { TuneParam } from '../../src/explore/tune-params.js';
import { loadScenario } from '../../src/scenario/load-scenario.js';

// `tune` starts from the values the engine runs with now: where a scenario does not set a
// knob, that is its engine profile's value (or the primitive's own), never a stale constant.

const text = (engine: string, layerEngine = '{}') => `
name: t
duration: 1s
arrival: { type: constant, rate: 1 }
tokens: { prompt: 10, completion: 10 }
layers:
  - { name: agent, retry: { policy: engine } }
  - { name: llm, retry: { policy: engine, engine: ${layerEngine} } }
engine: ${engine}
upstream: { models: [{ name: m, slots: 1, queue: 0, ttft: 1ms, tpot: 0ms }] }
variants: { as-written: {} }
`;

const param = (path: string, duration = false): TuneParam =>
  ({ path, duration, builtIn: true, min: 0, max: 1, scale: 'linear', integer: false }) as TuneParam;

describe('currentValue', () => {
  it("is the profile's value for a knob nobody sets: http by default, core when named", () => {
    expect(currentValue(loadScenario(text('{}')), param('engine.throttle.k'))).toBe(3);
    expect(currentValue(loadScenario(text('{}')), param('engine.retryBudget.ratio'))).toBe(0.5);
    expect(currentValue(loadScenario(text('{ profile: core }')), param('engine.throttle.k'))).toBe(2);
    expect(currentValue(loadScenario(text('{}')), param('engine.breaker.failureRatio'))).toBe(0.8);
  });

  it("reads a layer's knob as that layer's engine runs it: its own, else the block's, else its profile's", () => {
    const s = loadScenario(text('{ throttle: { k: 1.7 } }', '{ profile: core }'));
    expect(currentValue(s, param('layers[1].retry.engine.throttle.k'))).toBe(1.7);
    expect(currentValue(s, param('layers[1].retry.engine.retryBudget.ratio'))).toBe(0.1);
    expect(currentValue(s, param('layers[0].retry.engine.retryBudget.ratio'))).toBe(0.5);
  });

  it("is the primitive's own default where no profile sets it, and null for an option turned off", () => {
    expect(currentValue(loadScenario(text('{}')), param('engine.throttle.windowMs', true))).toBe(120_000);
    expect(currentValue(loadScenario(text('{ breaker: false }')), param('engine.breaker.failureRatio'))).toBeNull();
    expect(currentValue(loadScenario(text('{}')), param('engine.breaker.slowCallRatio'))).toBeNull();
  });
});
