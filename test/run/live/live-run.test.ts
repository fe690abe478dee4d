import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SeededRandom } from '../../../src/engine/random.js';
import { createFakeUpstream, type FakeUpstream, type FakeUpstreamObserver } from '../../../src/fake-upstream/server.js';
import { LiveRun } from '../../../src/run/live/live-run.js';
import { initHistograms } from '../../../src/run/metrics/histogram.js';
import type { RunResult } from '../../../src/run/metrics/result.js';
import type { RunSpec } from '../../../src/run/run-spec.js';
import { OUTAGE, naive, none, spec } from '../sim/spec.js';

beforeAll(() => initHistograms());

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});

/** A fake upstream for `s` on port 0, drawing from the simulator's seed split. */
async function fakeFor(s: RunSpec, observer?: FakeUpstreamObserver): Promise<FakeUpstream> {
  const fake = await createFakeUpstream({
    upstream: s.upstream,
    port: 0,
    random: new SeededRandom(s.seed).split('upstream'),
    observer,
  });
  open.push(fake);
  return fake;
}

/** Runs `s` live against a fresh fake upstream, to the end. */
async function live(s: RunSpec): Promise<{ result: RunResult; fake: FakeUpstream; run: LiveRun }> {
  const fake = await fakeFor(s);
  const run = new LiveRun(s, { connections: 64 });
  open.push(run);
  await run.start({ url: fake.url, stats: () => fake.stats() });
  return { result: run.result(), fake, run };
}

/** Short latencies so a few seconds of traffic end soon after. */
function fast(s: RunSpec, ttftMs = 20): RunSpec {
  s.upstream.models[0] = { ...s.upstream.models[0], ttftMs, tpotMs: 0 };
  return s;
}

describe('LiveRun', () => {
  it('a healthy run: every root succeeds once, and both ends count the same answers', async () => {
    const s = fast(spec({ layers: 3, policy: none, fanout: 1, rate: 20, durationMs: 3_000 }));
    const { result: r, fake, run } = await live(s);
    expect(run.done).toBe(true);
    expect(run.interrupted).toBe(false);
    expect(r.roots.offered).toBe(60);
    expect(r.successRate).toBe(1);
    expect(r.amplification).toBe(1);
    expect(r.durationMs).toBe(3_000);
    expect(r.upstream.attempts).toBe(60);
    expect(r.upstream.status).toEqual({ 200: 60 });
    expect(fake.stats().models[0].byStatus).toEqual({ 200: 60 });
    expect(fake.stats().http.clientClosed).toBe(0);
    // prompt 100 + completion 50 per call, as the fake counts them from the filler prompt.
    expect(r.upstream.tokensServed).toBe(60 * 150);
    expect(r.live).toMatchObject({ poolConnections: 64, requestErrors: 0 });
    expect(r.live!.maxPending).toBeGreaterThanOrEqual(0);
  });

  it('a full outage under naive 3 attempts × 3 layers: amplification 27.0 exactly, every root failed', async () => {
    const { result: r } = await live(
      spec({ layers: 3, policy: naive(3), fanout: 1, rate: 20, durationMs: 2_000, faults: OUTAGE }),
    );
    expect(r.amplification).toBe(27);
    expect(r.successRate).toBe(0);
    expect(r.roots.failed).toBe(r.roots.offered);
    expect(r.upstream.status).toEqual({ 503: r.upstream.attempts });
    expect(r.upstream.attempts).toBe(r.layers[2].logicalCalls * 27);
  });

  it('stop() mid-run keeps a partial result, measured over the time it ran, and aborts what was in flight', async () => {
    const s = fast(spec({ layers: 2, policy: none, fanout: 2, rate: 50, durationMs: 10_000 }), 200);
    let answered = 0;
    let run!: LiveRun;
    const fake = await fakeFor(s, { answered: () => void (++answered === 40 && run.stop()) });
    run = new LiveRun(s, { connections: 64 });
    open.push(run);
    await run.start({ url: fake.url, stats: () => fake.stats() });
    const r = run.result();
    expect(run.interrupted).toBe(true);
    expect(run.done).toBe(true);
    expect(r.durationMs).toBeLessThan(10_000);
    expect(r.durationMs).toBe(Math.max(1, Math.round(run.now)));
    expect(r.roots.offered).toBeGreaterThan(0);
    expect(r.roots.offered).toBeLessThan(500);
    expect(r.roots.unfinished).toBeGreaterThan(0);
    expect(run.transport.active).toBe(0);
    // Nothing moves after the stop.
    const attempts = r.upstream.attempts;
    await run.close();
    expect(run.result().upstream.attempts).toBe(attempts);
  });

  it('a run that ends with work still in flight aborts it when the drain runs out', async () => {
    const s = fast(spec({ layers: 1, policy: none, fanout: 1, rate: 10, durationMs: 300 }));
    s.drainMs = 200;
    s.upstream.faults = [{ kind: 'hang', fromMs: 0, toMs: 1e12, rate: 1 }];
    const { result: r, run, fake } = await live(s);
    expect(run.interrupted).toBe(false);
    expect(run.now).toBeGreaterThanOrEqual(500 - 2);
    expect(r.roots.unfinished).toBe(r.roots.offered);
    expect(run.transport.active).toBe(0);
    expect(fake.stats().models[0].byStatus).toEqual({});
  });

  it('stop() before start gives an empty result; start twice is refused', async () => {
    const s = spec({ layers: 1, policy: none, rate: 10, durationMs: 1_000 });
    const run = new LiveRun(s);
    open.push(run);
    expect(run.view('x')).toMatchObject({ name: 'x', done: false });
    expect(run.now).toBe(0);
    run.stop();
    expect(run.done).toBe(true);
    expect(run.started).toBe(false);
    expect(run.result().roots.offered).toBe(0);
    expect(() => run.start({ url: 'http://127.0.0.1:1' })).toThrow(/once/);
  });

  it('the view shows the fake upstream, and the client side without one', async () => {
    const s = fast(spec({ layers: 1, policy: none, fanout: 1, rate: 20, durationMs: 500 }));
    const { run, fake } = await live(s);
    const v = run.view('live');
    expect(v.done).toBe(true);
    expect(v.upstream.models[0].byStatus).toEqual(fake.stats().models[0].byStatus);
    expect(v.snapshot.roots.offered).toBe(10);
    expect(run.transport.upstreamStats().models[0]).toMatchObject({
      name: 'primary',
      busy: 0,
      attempts: 10,
      byStatus: { 200: 10 },
    });
  });
});

describe('LiveRun: a layer that streams', () => {
  it('asks for streams for its own layer and times its first token from the stream, as the simulator does', async () => {
    const s = spec({ layers: 1, policy: none, fanout: 1, rate: 10, durationMs: 1_000 });
    // 20 ms to the first token, then 50 completion tokens at 4 ms: a whole answer takes 220 ms.
    s.upstream.models[0] = { ...s.upstream.models[0], ttftMs: 20, tpotMs: 4 };
    s.traffic.layers[0] = { ...s.traffic.layers[0], stream: true };
    const { result: r } = await live(s);
    expect(r.successRate).toBe(1);
    const layer = r.layers[0];
    expect(layer.ttftMs).toBeDefined();
    expect(layer.ttftMs!.p50).toBeGreaterThanOrEqual(15);
    expect(layer.ttftMs!.p50).toBeLessThan(layer.latencyMs.p50 - 100);
  });
});
