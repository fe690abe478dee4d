import { describe, expect, it } from 'vitest';
import { Simulation } from '../../src/run/sim/simulation.js';
import { runSpecOf } from '../../src/run/run-spec.js';
import { loadScenario } from '../../src/scenario/load-scenario.js';

/** An agent making 3 model calls of exactly 100 ms each (no jitter, plenty of capacity). */
const AGENT = (set: string[]) => {
  const s = loadScenario(
    `
name: seq
duration: 10s
drain: 10s
arrival: { type: constant, rate: 5 }
tokens: { prompt: 10, completion: 1 }
layers:
  - { name: agent, fanout: 3 }
  - { name: llm }
upstream:
  models: [{ name: m, slots: 100, queue: 100, ttft: 100ms, tpot: 0ms }]
`,
    { set },
  );
  return new Simulation(runSpecOf(s, 'seq')).run();
};

describe('layers[i].sequential: children one after another', () => {
  it('an attempt takes the sum of its children, not the slowest one', () => {
    const together = AGENT([]);
    const inTurn = AGENT(['layers[0].sequential=true']);
    expect(together.layers[0].latencyMs.p50).toBeCloseTo(100, -1);
    expect(inTurn.layers[0].latencyMs.p50).toBeCloseTo(300, -1);
    // The same calls, one at a time.
    expect(inTurn.layers[1].logicalCalls).toBe(together.layers[1].logicalCalls);
    expect(inTurn.layers[0].ok).toBe(together.layers[0].ok);
  });

  it('the first failure ends the attempt: the rest are never started', () => {
    const fail = ['upstream.faults=[{kind: errors, rate: 1, status: 503}]'];
    const together = AGENT(fail);
    const inTurn = AGENT([...fail, 'layers[0].sequential=true']);
    expect(together.upstream.attempts).toBe(3 * together.roots.offered);
    expect(inTurn.upstream.attempts).toBe(inTurn.roots.offered);
    expect(inTurn.layers[0].failed).toBe(inTurn.roots.offered);
  });

  it('retries of a sequential attempt start again from its first child', () => {
    const inTurn = AGENT([
      'upstream.faults=[{kind: errors, rate: 1, status: 503}]',
      'layers[0].sequential=true',
      'layers[0].retry={policy: naive, attempts: 2, backoff: {baseMs: 10}}',
    ]);
    expect(inTurn.upstream.attempts).toBe(2 * inTurn.roots.offered);
  });
});
