import { afterEach, describe, expect, it } from 'vitest';
import { SeededRandom } from '../../../src/engine/random.js';
import { createFakeUpstream } from '../../../src/fake-upstream/server.js';
import { LiveRun } from '../../../src/run/live/live-run.js';
import type { RunResult } from '../../../src/run/metrics/result.js';
import type { RunSpec } from '../../../src/run/run-spec.js';
import { Simulation } from '../../../src/run/sim/simulation.js';
import type { RetryPolicy } from '../../../src/traffic/config.js';
import { engine, naive, spec } from '../sim/spec.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});

const IDLE_MS = 300;
const TIMEOUT_MS = 4_000;

/**
 * A streamed llm layer over a primary and a fallback model. A third of the primary's streams
 * stall after 5 of their 50 tokens, forever, with the connection open; every stream takes
 * 20 ms to its first token and 4 ms a token (16 chunks ~12 ms apart): about 220 ms.
 */
function stalls(retry: RetryPolicy, fault: 'stall' | 'cut' = 'stall'): RunSpec {
  const s = spec({ layers: 1, policy: retry, fanout: 1, rate: 10, durationMs: 2_000 });
  s.traffic.layers[0] = {
    ...s.traffic.layers[0],
    stream: true,
    timeoutMs: TIMEOUT_MS,
    models: ['primary', 'fallback'],
  };
  const model = { ...s.upstream.models[0], ttftMs: 20, tpotMs: 4 };
  s.upstream.models = [model, { ...model, name: 'fallback' }];
  s.upstream.faults = [{ kind: fault, model: 'primary', fromMs: 0, toMs: 1e12, rate: 1 / 3, afterTokens: 5 }];
  return s;
}

/** `s` live against the fake upstream on port 0, drawing from the simulator's seed split. */
async function live(s: RunSpec): Promise<RunResult> {
  const fake = await createFakeUpstream({
    upstream: s.upstream,
    port: 0,
    random: new SeededRandom(s.seed).split('upstream'),
  });
  open.push(fake);
  const run = new LiveRun(s, { connections: 64 });
  open.push(run);
  await run.start({ url: fake.url, stats: () => fake.stats() });
  return run.result();
}

/** What both modes must agree on: roots, attempts per model and by outcome. */
function counts(r: RunResult) {
  return {
    ok: r.roots.ok,
    truncated: r.truncatedSuccesses,
    failed: r.roots.failed,
    attempts: r.upstream.attempts,
    primary: r.upstream.models[0].status,
    fallback: r.upstream.models[1].status,
  };
}

describe('live mode: the idle gap of a streamed engine layer', () => {
  it('cuts a stream that stalls after its first tokens at idleMs and fails over (commit: complete), with the counts of the simulator', async () => {
    const s = stalls(
      engine({
        maxAttempts: 2,
        stream: { commit: 'complete', idleMs: IDLE_MS, firstTokenMs: 2_000, headersMs: 2_000 },
      }),
    );
    const sim = new Simulation(s).run();
    const r = await live(s);
    expect(r.roots.offered).toBe(20);
    expect(r.successRate).toBe(1);
    const stalled = r.upstream.models[0].status.timeout;
    expect(stalled).toBeGreaterThan(0); // the faults bite
    // Each stall was abandoned (no answer) and answered by the fallback at once.
    expect(r.upstream.models[1].status).toEqual({ 200: stalled });
    // Cut at idleMs after its last chunk (~40 ms in), nowhere near the layer's 4 s timeout.
    expect(r.roots.latencyMs.max).toBeGreaterThan(IDLE_MS);
    expect(r.roots.latencyMs.max).toBeLessThan(IDLE_MS + 1_000);
    expect(counts(r)).toEqual(counts(sim));
  }, 30_000);

  it('with commit: first-token (as shipped) a stall after the first token ends the answer with an error, as in the simulator', async () => {
    const s = stalls(
      engine({
        maxAttempts: 2,
        stream: { commit: 'first-token', idleMs: IDLE_MS, firstTokenMs: 2_000, headersMs: 2_000 },
      }),
    );
    const sim = new Simulation(s).run();
    const r = await live(s);
    expect(r.upstream.models[0].status.timeout).toBeGreaterThan(0);
    expect(r.successRate).toBeLessThan(1);
    expect(r.upstream.models[1].attempts).toBe(0); // a committed stream is never failed over
    expect(counts(r)).toEqual(counts(sim));
  }, 30_000);

  it('a naive layer keeps its own behaviour: it waits each stall out to its timeout, as in the simulator', async () => {
    const s = stalls(naive(2));
    const sim = new Simulation(s).run();
    const r = await live(s);
    expect(r.upstream.models[0].status.timeout).toBeGreaterThan(0);
    expect(r.upstream.models[1].attempts).toBe(0);
    expect(r.roots.latencyMs.max).toBeGreaterThanOrEqual(TIMEOUT_MS);
    expect(counts(r)).toEqual(counts(sim));
  }, 30_000);
});

describe('live mode: a layer stream that closes without its end marker, read as the simulator reads it', () => {
  it('a cut stream is a truncated success for a naive layer and a stream_cut the engine fails over, with the counts of the simulator', async () => {
    const plain = stalls(naive(2), 'cut');
    const plainSim = new Simulation(plain).run();
    const p = await live(plain);
    expect(p.truncatedSuccesses).toBeGreaterThan(0);
    expect(p.upstream.models[1].attempts).toBe(0);
    expect(counts(p)).toEqual(counts(plainSim));

    const guarded = stalls(engine({ maxAttempts: 1, stream: { commit: 'complete' } }), 'cut');
    const guardedSim = new Simulation(guarded).run();
    const g = await live(guarded);
    expect(g.truncatedSuccesses).toBe(0);
    expect(g.successRate).toBe(1);
    // Every cut answered 200 on the primary, then again by the fallback.
    expect(g.upstream.models[1].status).toEqual({ 200: p.truncatedSuccesses });
    expect(counts(g)).toEqual(counts(guardedSim));
  }, 30_000);
});
