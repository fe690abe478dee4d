import { afterEach, describe, expect, it } from 'vitest';
import { SeededRandom } from '../../../src/engine/random.js';
import { createFakeUpstream, type FakeUpstream } from '../../../src/fake-upstream/server.js';
import { LiveRun } from '../../../src/run/live/live-run.js';
import { Simulation } from '../../../src/run/sim/simulation.js';
import { ENGINE, spec } from '../sim/spec.js';

let fake: FakeUpstream | undefined;
let run: LiveRun | undefined;
afterEach(async () => {
  await run?.close();
  await fake?.close();
});

describe('engine.concurrency live', () => {
  it('holds a slot per attempt over real HTTP as in the simulation: the same refusals, at most maxInFlight at the upstream', async () => {
    // 10 calls/s for 3 s, each answered in ~1,050 ms; 2 slots, 3 waiting at most 420 ms each.
    // Every arrival, release and expiry is at least 30 ms from the next, so the real clock
    // orders them as the virtual one does.
    const s = spec({
      layers: 1,
      policy: { policy: 'engine', engine: {} },
      fanout: 1,
      rate: 10,
      durationMs: 3_000,
      engine: { ...ENGINE, concurrency: { maxInFlight: 2, maxQueue: 3, maxWaitMs: 420 } },
    });
    s.drainMs = 10_000;
    s.upstream.models[0] = { ...s.upstream.models[0], ttftMs: 1050, tpotMs: 0 };
    const sim = new Simulation(s).run();
    fake = await createFakeUpstream({
      upstream: s.upstream,
      port: 0,
      random: new SeededRandom(s.seed).split('upstream'),
    });
    let inFlight = 0;
    let most = 0;
    const f = fake;
    run = new LiveRun(s);
    const poll = setInterval(() => {
      inFlight = f.stats().inFlight;
      most = Math.max(most, inFlight);
    }, 10);
    try {
      await run.start({ url: f.url, stats: () => f.stats() });
    } finally {
      clearInterval(poll);
    }
    const r = run.result();
    expect(sim.layers[0].shed.concurrency).toBeGreaterThan(0);
    expect(sim.layers[0].shed.queue_timeout).toBeGreaterThan(0);
    expect(r.roots.offered).toBe(30);
    expect(r.roots.ok + (r.layers[0].shed.concurrency ?? 0) + (r.layers[0].shed.queue_timeout ?? 0)).toBe(30);
    expect(r.upstream.attempts).toBe(r.roots.ok);
    expect(Math.abs(r.roots.ok - sim.roots.ok)).toBeLessThanOrEqual(1);
    expect(most).toBe(2); // seen by the server itself, polled every 10 ms
  }, 30_000);
});
