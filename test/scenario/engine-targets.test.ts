import { describe, expect, it } from 'vitest';
import { Simulation } from '../../src/run/sim/simulation.js';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { ScenarioError } from '../../src/scenario/scenario-error.js';

/**
 * `engine.targets`: stream limits per model target. A reasoning model whose first token comes at
 * ~60 s, behind the engine's 20 s first-token limit, with a chat fallback: with its own 120 s it
 * answers; without, every call fails over to the chat model at 20 s.
 */
const SCENARIO = `
name: reasoning-chain
seed: 5
duration: 20s
drain: 200s
arrival: { type: constant, rate: 1 }
tokens: { prompt: 100, completion: 20 }
layers:
  - name: llm
    stream: true
    retry: { policy: engine }
    models: [reasoning, chat]
engine:
  stream: { firstToken: 20s, idle: 15s, headers: 200s }
upstream:
  models:
    - { name: reasoning, slots: 100, queue: 100, ttft: 60s, tpot: 10ms }
    - { name: chat, slots: 100, queue: 100, ttft: 300ms, tpot: 10ms }
variants: { as-written: {} }
`;

function run(set: string[]) {
  const s = loadScenario(SCENARIO, { set, variant: 'as-written' });
  return new Simulation({
    name: 'reasoning-chain',
    seed: s.seed,
    durationMs: s.durationMs,
    drainMs: s.drainMs,
    traffic: s.traffic,
    upstream: s.upstream,
  }).run();
}

function problems(set: string[]): string[] {
  try {
    loadScenario(SCENARIO, { set, variant: 'as-written' });
  } catch (e) {
    if (e instanceof ScenarioError) return e.problems;
    throw e;
  }
  return [];
}

/** Upstream attempts per model name. */
function attempts(r: ReturnType<typeof run>): Record<string, number> {
  return Object.fromEntries(r.upstream.models.map((m) => [m.name, m.attempts]));
}

describe('engine.targets: stream limits per model target in a scenario', () => {
  it('the reasoning model with its own 120 s answers; with the engine’s 20 s every call fails over to chat', () => {
    const own = attempts(
      run(['engine.targets={reasoning: {stream: {firstToken: 120s}}, chat: {stream: {firstToken: 10s}}}']),
    );
    const shared = attempts(run([]));
    expect(own.chat).toBe(0);
    expect(own.reasoning).toBeGreaterThan(0);
    expect(shared.chat).toBe(shared.reasoning);
    expect(shared.chat).toBeGreaterThan(0);
  });

  it('a layer’s retry.engine.targets merges over the block’s, model by model', () => {
    const r = attempts(
      run([
        'engine.targets={reasoning: {stream: {firstToken: 10s}}}',
        'layers[0].retry.engine.targets={reasoning: {stream: {firstToken: 120s}}}',
      ]),
    );
    expect(r.chat).toBe(0);
  });

  it('refuses a target that is not a model the layer calls, and a tool call’s targets, in one line each', () => {
    const unknown = problems(['engine.targets={gpt-5: {stream: {firstToken: 120s}}}']);
    expect(unknown).toHaveLength(1);
    expect(unknown[0]).toMatch(/engine\.targets\.gpt-5: not a model the last layer calls \(reasoning, chat\)$/);
    expect(problems(['engine.targets={reasoning: {stream: {firstToken: 0s}}}']).join('\n')).toMatch(
      /engine\.targets\.reasoning\.stream\.firstToken/,
    );
    expect(problems(['engine.targets={reasoning: {stream: {commit: complete}}}']).join('\n')).toMatch(/commit/);
    // Stream limits on a layer that does not stream would change nothing.
    const unstreamed = problems(['layers[0].stream=false', 'engine.targets={reasoning: {stream: {firstToken: 120s}}}']);
    expect(unstreamed).toHaveLength(1);
    expect(unstreamed[0]).toMatch(/engine\.targets: sets stream limits per model, but the last layer does not stream/);
  });
});
