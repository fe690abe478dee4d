import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/run/metrics/result.js';
import { runAll } from '../scenario/claims.js';

// The simulator's `stream.resume`: a streamed engine call whose committed stream is cut (or
// stalls) is continued on a model that declares `continuation: prefill` — the delivered tokens
// sent back as a prefill, the rest asked for — priced by the upstream as such a request is.

const SCENARIO = `
name: resume
seed: 3
duration: 10s
drain: 30s
arrival: { type: constant, rate: 5 }
deadline: 60s
tokens: { prompt: 100, completion: 50 }
layers:
  - name: llm
    timeout: 30s
    stream: true
    retry: { policy: engine }
    models: [primary, fallback]
# No breaker, throttle or budget: every call meets the cut on the primary.
engine:
  stream: { firstToken: 2s, idle: 1s }
  breaker: false
  throttle: false
  retryBudget: false
upstream:
  models:
    - { name: primary, slots: 64, queue: 64, ttft: 100ms, tpot: 10ms }
    - { name: fallback, slots: 64, queue: 64, ttft: 300ms, tpot: 10ms }
  faults:
    - { kind: cut, model: primary, rate: 1, after: 10 }
variants:
  undeclared: {}
  continues:
    upstream.models[1].continuation: prefill
  resume-off:
    upstream.models[1].continuation: prefill
    engine.stream.resume: false
  rejects:
    upstream.models[1].continuation: prefill
    upstream.faults:
      - { kind: cut, model: primary, rate: 1, after: 10 }
      - { kind: prefill-rejected, model: fallback }
  stalls:
    upstream.models[1].continuation: prefill
    upstream.faults[0]: { kind: stall, model: primary, rate: 1, after: 10, for: forever }
`;

const llm = (r: RunResult) => r.layers.find((l) => l.name === 'llm')!;
const model = (r: RunResult, name: string) => r.upstream.models.find((m) => m.name === name)!;

describe('simulator: stream.resume on models that declare continuation: prefill', () => {
  const { results } = runAll(SCENARIO);

  it('no declaring model: every cut after commit ends the answer with an error, as before, and no resumed figure', () => {
    const r = results.undeclared;
    expect(llm(r).ok).toBe(0);
    expect(r).not.toHaveProperty('resumedStreams');
    expect(model(r, 'fallback').attempts).toBe(0);
  });

  it('a declaring fallback continues each cut answer: whole answers, counted as resumed', () => {
    const r = results.continues;
    const calls = llm(r).logicalCalls;
    expect(calls).toBe(50);
    expect(llm(r).ok).toBe(calls);
    expect(r.resumedStreams).toBe(calls);
    expect(llm(r).resumedStreams).toBe(calls);
    expect(r.truncatedSuccesses).toBe(0);
    // One resumption per call, counted as an attempt of the layer.
    expect(llm(r).attempts).toBe(2 * calls);
    expect(model(r, 'fallback').attempts).toBe(calls);
    // Priced as a prefill: the fallback reads the prompt plus the 10 delivered tokens and writes the other 40.
    expect(model(r, 'fallback').tokensServed).toBe(calls * (100 + 10 + 40));
    // The caller's first token is the primary's (100 ms), not the continuation's.
    expect(llm(r).ttftMs!.p99).toBeLessThan(150);
  });

  it('resume: false keeps the in-band error even with a declaring model', () => {
    const r = results['resume-off'];
    expect(llm(r).ok).toBe(0);
    expect(r.resumedStreams).toBe(0);
    expect(model(r, 'fallback').attempts).toBe(0);
  });

  it('a declaring model that rejects the prefill (400) leaves the caller with the failed answer', () => {
    const r = results.rejects;
    expect(llm(r).ok).toBe(0);
    expect(r.resumedStreams).toBe(0);
    expect(model(r, 'fallback').status['400']).toBe(llm(r).logicalCalls);
  });

  it('a stall after commit is continued too, after the idle limit', () => {
    const r = results.stalls;
    expect(llm(r).ok).toBe(llm(r).logicalCalls);
    expect(r.resumedStreams).toBe(llm(r).logicalCalls);
    expect(model(r, 'fallback').tokensServed).toBe(llm(r).logicalCalls * (100 + 10 + 40));
  });
});
