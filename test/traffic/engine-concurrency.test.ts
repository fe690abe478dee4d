import { describe, expect, it } from 'vitest';
import { ShedError } from '../../src/engine/errors.js';
import { Guard } from '../../src/engine/guard.js';
import { ManualClock } from '../../src/engine/manual-clock.js';
import { SeededRandom } from '../../src/engine/random.js';
import type { RunResult } from '../../src/run/metrics/result.js';
import { Simulation } from '../../src/run/sim/simulation.js';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { drive } from '../helpers/drive.js';

// `engine.concurrency` in the simulator is the engine's own limiter held per attempt, as
// `guard.run` holds it: the same calls get slots, wait, and are refused for the same reasons.

/** 10 calls/s for 3 s, each answered in exactly 1,050 ms (no ties with arrivals at whole 100 ms). */
const SCENARIO = `
name: slots
duration: 3s
drain: 60s
arrival: { type: constant, rate: 10 }
tokens: { prompt: 10, completion: 10 }
layers:
  - { name: llm, retry: { policy: engine } }
engine:
  concurrency: { maxInFlight: 2, maxQueue: 3, maxWaitMs: 420ms }
upstream:
  models:
    - { name: primary, slots: 100, queue: 0, ttft: 1050ms, tpot: 0ms }
variants: { as-written: {} }
`;

function simulate(text: string, set: string[] = []): RunResult {
  const s = loadScenario(text, { set, variant: 'as-written' });
  return new Simulation({
    name: 'x',
    seed: s.seed,
    durationMs: s.durationMs,
    drainMs: s.drainMs,
    traffic: s.traffic,
    upstream: s.upstream,
  }).run();
}

/** The same 30 calls through `guard.run` on a manual clock: how each ended. */
async function throughGuard(): Promise<Record<string, number>> {
  const clock = new ManualClock(0);
  const guard = new Guard({
    clock,
    random: new SeededRandom(1),
    concurrency: { maxInFlight: 2, maxQueue: 3, maxWaitMs: 420 },
  });
  const ends: Record<string, number> = {};
  const count = (k: string) => (ends[k] = (ends[k] ?? 0) + 1);
  const answer = () => new Promise<string>((resolve) => clock.setTimer(1050, () => resolve('ok')));
  const calls: Promise<unknown>[] = [];
  for (let i = 0; i < 30; i++) {
    clock.advanceTo(i * 100);
    calls.push(
      guard.run(answer).then(
        () => count('ok'),
        (e: unknown) => count(e instanceof ShedError ? e.reason : 'error'),
      ),
    );
    await drive(clock, Promise.resolve());
  }
  await drive(clock, Promise.all(calls));
  return ends;
}

describe('engine.concurrency in the simulator', () => {
  it('gives the same calls slots, waits and refusals as guard.run with the same limit', async () => {
    const r = simulate(SCENARIO);
    const guard = await throughGuard();
    const llm = r.layers[0];
    expect(guard.ok).toBeGreaterThan(0);
    expect(guard.concurrency).toBeGreaterThan(0);
    expect(guard.queue_timeout).toBeGreaterThan(0);
    expect({ ok: r.roots.ok, ...llm.shed }).toEqual(guard);
    // Only calls that got a slot reached the upstream, never more than two at once.
    expect(r.upstream.attempts).toBe(guard.ok);
  });

  it('a full queue refuses at once; no limit, nobody is refused', () => {
    const noQueue = simulate(SCENARIO, ['engine.concurrency.maxQueue=0']);
    expect(noQueue.layers[0].shed).toEqual({ concurrency: 30 - noQueue.roots.ok });
    expect(noQueue.roots.ok).toBeLessThan(simulate(SCENARIO).roots.ok);
    const off = simulate(SCENARIO, ['engine.concurrency=false']);
    expect(off.roots.ok).toBe(30);
    expect(off.layers[0].shed).toEqual({});
  });

  it('a wait in the queue counts in the call latency', () => {
    const r = simulate(SCENARIO, ['engine.concurrency.maxWaitMs=1m', 'engine.concurrency.maxQueue=100']);
    expect(r.roots.ok).toBe(30);
    // 2 at a time, 1,050 ms each: the last of 30 calls waits for 14 rounds.
    expect(r.roots.latencyMs.max).toBeGreaterThan(14 * 1050 - 3000);
  });

  it('a layer override limits that layer only, each replica by its own limiter', () => {
    const text = SCENARIO.replace(
      '  - { name: llm, retry: { policy: engine } }',
      `  - { name: gateway, replicas: 2, retry: { policy: engine, engine: { concurrency: { maxInFlight: 1, maxQueue: 0 } } } }
  - { name: llm, retry: { policy: engine } }`,
    ).replace('engine:\n  concurrency: { maxInFlight: 2, maxQueue: 3, maxWaitMs: 420ms }\n', '');
    const r = simulate(text);
    // Two replicas, one slot each, calls 100 ms apart taking ~1,050 ms: one call in five gets through.
    expect(r.layers[0].shed.concurrency).toBeGreaterThan(0);
    expect(r.layers[1].shed).toEqual({});
    expect(r.roots.ok + (r.layers[0].shed.concurrency ?? 0)).toBe(30);
    expect(r.roots.ok).toBeGreaterThanOrEqual(4);
  });
});
