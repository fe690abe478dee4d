import { afterEach, describe, expect, it } from 'vitest';
import { SeededRandom } from '../../../src/engine/random.js';
import { createFakeUpstream, type FakeUpstream } from '../../../src/fake-upstream/server.js';
import { LiveRun } from '../../../src/run/live/live-run.js';
import { Simulation } from '../../../src/run/sim/simulation.js';
import { naive, spec } from '../sim/spec.js';

let fake: FakeUpstream | undefined;
let run: LiveRun | undefined;
afterEach(async () => {
  await run?.close();
  await fake?.close();
});

describe('sim and live agree', () => {
  it('same scenario (503s at 30 %, naive 2 attempts × 2 layers): amplification within 5 %, success within 3 points', async () => {
    // ttft 20 ms, no per-token time: about 5 s of traffic, over soon after.
    const s = spec({
      layers: 2,
      policy: naive(2),
      fanout: 2,
      rate: 50,
      durationMs: 5_000,
      faults: [{ kind: 'errors', fromMs: 0, toMs: 1e12, rate: 0.3, status: 503 }],
    });
    s.upstream.models[0] = { ...s.upstream.models[0], ttftMs: 20, tpotMs: 0 };
    const sim = new Simulation(s).run();
    // Same seed, same draws: the fake upstream's model draws from the simulator's seed split
    // (as `run --mode live` starts it), so a request meets the same fault draw as in the
    // simulation as long as requests reach the model in the same order, which they nearly all
    // do. (Two runs with independent draws would differ by about 4 % (1σ) at this size.)
    fake = await createFakeUpstream({
      upstream: s.upstream,
      port: 0,
      random: new SeededRandom(s.seed).split('upstream'),
    });
    run = new LiveRun(s);
    const f = fake;
    await run.start({ url: f.url, stats: () => f.stats() });
    const r = run.result();
    expect(r.roots.offered).toBe(sim.roots.offered);
    expect(r.layers[1].logicalCalls).toBe(sim.layers[1].logicalCalls);
    expect(sim.amplification).toBeGreaterThan(1.3); // the faults bite
    expect(Math.abs(r.amplification / sim.amplification - 1)).toBeLessThanOrEqual(0.05);
    expect(Math.abs(r.successRate - sim.successRate)).toBeLessThanOrEqual(0.03);
  }, 30_000);
});
