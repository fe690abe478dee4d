import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeUpstream, type FakeUpstream } from '../../src/fake-upstream/server.js';
import type { RouteStats } from '../../src/fake-upstream/fake-upstream-stats.js';
import { scriptedGateway, type ScriptedGatewayOptions } from '../helpers/scripted-gateway.js';
import { cli, tempDir } from './capture-io.js';

/**
 * A full outage behind a gateway. The driver tries each call 3 times, each try timing out at
 * 100 ms; the gateway tries each request 3 times, 250 ms apart, and goes on after the driver
 * gave up on it. So every try of the driver becomes exactly 3 requests at the upstream, most
 * of them after the driver's try was over — the last ones after the driver stopped.
 */
const OUTAGE = `
name: gateway-outage
duration: 1s
drain: 10s
arrival: { type: constant, rate: 10 }
tokens: { prompt: 50, completion: 10 }
layers:
  - name: llm
    timeout: 100ms
    retry: { policy: naive, attempts: 3, backoff: { strategy: exponential, baseMs: 10, capMs: 10 } }
upstream:
  faults: [{ kind: outage, from: 0s, to: 10m, status: 503 }]
  models:
    - { name: primary, slots: 64, queue: 64, ttft: 5ms, tpot: 0 }
live: { connections: 16 }
`;

/** Healthy, one try per call that does not time out: what the gateway does to successes shows. */
const HEALTHY = `
name: gateway-healthy
duration: 1s
drain: 5s
arrival: { type: constant, rate: 20 }
tokens: { prompt: 50, completion: 40 }
layers:
  - { name: llm, retry: { policy: none } }
upstream:
  models:
    - { name: primary, slots: 64, queue: 64, ttft: 5ms, tpot: 0 }
live: { connections: 16 }
`;

const dir = tempDir({ 'outage.yaml': OUTAGE, 'healthy.yaml': HEALTHY });
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

/** `stormlab serve` as a user starts it: its own natural answer lengths, no faults until the harness installs them. */
async function serve(): Promise<FakeUpstream> {
  const fake = await createFakeUpstream({
    upstream: { models: [{ name: 'primary', slots: 64, queue: 64, ttftMs: 5, tpotMs: 0 }] },
    port: 0,
  });
  closers.push(() => fake.close());
  return fake;
}

async function gateway(o: ScriptedGatewayOptions) {
  const gw = await scriptedGateway(o);
  closers.push(() => gw.close());
  return gw;
}

const chat = (fake: FakeUpstream): RouteStats =>
  fake.stats().routes.find((r) => r.route === '/v1/chat/completions') ?? {
    route: '/v1/chat/completions',
    requests: 0,
    inFlight: 0,
    status: {},
    noLengthHeader: 0,
  };

const live = (scenario: string, gw: string, up: string, ...more: string[]) =>
  cli([
    'run',
    join(dir, scenario),
    '--mode',
    'live',
    '--target',
    gw,
    '--upstream',
    up,
    '--settle-quiet',
    '600ms',
    '--no-ui',
    '--json',
    'out.json',
    ...more,
  ]);

describe('gateway mode: hop 2 read once it settled, the hops apart and the total', () => {
  it("hop 2 equals the upstream's own counters, and the total is hop 1 × hop 2 (3 × 3 = 9 under full outage)", async () => {
    const fake = await serve();
    const gw = await gateway({ upstream: fake.url, attempts: 3, backoffMs: 250 });
    const before = chat(fake);
    const r = await live('outage.yaml', gw.url, fake.url);
    expect(r.code).toBe(0);
    const v = JSON.parse(r.files.get('out.json')!).variants[0];
    const hop = v.live.upstream;
    const after = chat(fake);

    // Hop 1: 10 roots, 3 tries each, every one timed out by the driver.
    expect(v.layers[0].logicalCalls).toBe(10);
    expect(v.upstream.attempts).toBe(30);
    expect(v.amplification).toBe(3);
    expect(v.upstream.status).toEqual({ timeout: 30 });
    // Hop 2, settled: exactly the upstream's count, every status as it went out on the wire.
    expect(hop.settle).toMatchObject({ settled: true, outcome: 'quiet', quietMs: 600, inFlight: 0 });
    expect(hop.sent).toBe(gw.counts.received);
    expect(hop.reached).toBe(after.requests - before.requests);
    expect(hop.reached).toBe(gw.counts.forwarded);
    expect(hop.reached).toBe(90);
    expect(hop.status).toEqual({ 503: 90 });
    expect(hop.routes).toEqual([{ route: '/v1/chat/completions', requests: 90, status: { 503: 90 } }]);
    expect(after.status['503'] - (before.status['503'] ?? 0)).toBe(90);
    expect(fake.stats().models[0].attempts).toBe(90);
    // The gateway kept going after the driver stopped: read at the driver's end, hop 2 would be short.
    expect(gw.counts.afterClientLeft).toBeGreaterThan(0);
    expect(hop.settle.afterEnd).toBeGreaterThan(0);
    // The total, hop 1 × hop 2.
    expect(hop.amplification).toBe(3);
    expect(hop.totalAmplification).toBe(9);
    expect(hop.totalAmplification).toBe(v.amplification * hop.amplification);
    // The summary says it with each figure labelled; the upstream has its own (no) faults back.
    expect(r.out).toMatch(/^amplification hop 1 3\.00× · hop 2 3\.00× · total 9\.00×/);
    expect(r.out).toMatch(/^total amplification +9\.00×$/m);
    expect(r.out).toMatch(/^hop 1 · driver → gateway\n {2}attempts +30\n {2}amplification +3\.00×$/m);
    expect(r.out).toMatch(
      /^hop 2 · gateway → upstream\n {2}requests +90\n {2}amplification +3\.00×\n {2}status 503 +90$/m,
    );
    expect(r.out).toMatch(/^ {2}settled +after [\d.]+ m?s$/m);
    expect(r.out).toMatch(/^ {2}requests after stop +[1-9]\d*$/m);
    // --no-ui progress lines carry both hops too.
    expect(r.err).toMatch(/gateway-outage hop 1 3\.00× .* · hop 2 3\.00× \(90 reached\) · total 9\.00×/);
    expect(fake.faults()).toEqual([]);
  }, 60_000);

  it("a quiet window shorter than the gateway's backoff reads hop 2 too early: what the wait is for", async () => {
    const fake = await serve();
    const gw = await gateway({ upstream: fake.url, attempts: 3, backoffMs: 250 });
    const r = await live('outage.yaml', gw.url, fake.url, '--settle-quiet', '0ms');
    expect(r.code).toBe(0);
    const hop = JSON.parse(r.files.get('out.json')!).variants[0].live.upstream;
    await gw.idle();
    // Read early, hop 2 misses the gateway's last tries — and the faults went back while it still
    // tried, so those hit the healed upstream and got 200s (the 503s of the run, the 200s after it).
    expect(hop.reached).toBeLessThan(gw.counts.forwarded);
    expect(chat(fake).requests).toBe(gw.counts.forwarded);
    expect(chat(fake).status['200']).toBeGreaterThan(0);
    expect(hop.status['200']).toBeUndefined();
  }, 60_000);

  it("shows serve's own 200s beside the gateway's 500s", async () => {
    const fake = await serve();
    const gw = await gateway({ upstream: fake.url, attempts: 1, backoffMs: 0, breakSuccesses: true });
    const r = await live('healthy.yaml', gw.url, fake.url);
    expect(r.code).toBe(0);
    const v = JSON.parse(r.files.get('out.json')!).variants[0];
    expect(v.upstream.status).toEqual({ 500: 20 });
    expect(v.live.upstream.status).toEqual({ 200: 20 });
    expect(r.out).toMatch(/^hop 1 · driver → gateway\n(.*\n){5} {2}status 500 +20$/m);
    expect(r.out).toMatch(/^hop 2 · gateway → upstream\n(.*\n){2} {2}status 200 +20$/m);
    expect(r.out).toContain(
      'note: gateway-healthy: the upstream answered the gateway 20 200s, the gateway the driver 0: 20 successes never reached the driver',
    );
  }, 60_000);

  it('a gateway that drops the length header: said in one line, and serve still answers the lengths the driver asks', async () => {
    const fake = await serve();
    const gw = await gateway({ upstream: fake.url, attempts: 1, backoffMs: 0, drop: ['x-stormlab-output-tokens'] });
    const r = await live('healthy.yaml', gw.url, fake.url, '--set', 'tokens.completion=1000');
    expect(r.code).toBe(0);
    const v = JSON.parse(r.files.get('out.json')!).variants[0];
    const hop = v.live.upstream;
    expect(hop).toMatchObject({ reached: 20, noLengthHeader: 20, lengthsAsAsked: true });
    expect(r.out).toContain(
      'note: gateway-healthy: 20 of 20 requests reached the upstream without x-stormlab-output-tokens (the gateway does not pass it on): the upstream answered them as the header asks',
    );
    // Every answer max_tokens (1000) long, as the header asks, not serve's natural length (a median of 300):
    // what is left per answer is the prompt's estimate, the same for every request.
    expect(v.upstream.tokensServed).toBe(hop.tokensServed);
    const prompt = hop.tokensServed / 20 - 1000;
    expect(Number.isInteger(prompt)).toBe(true);
    expect(prompt).toBeGreaterThan(0);
    expect(prompt).toBeLessThan(200);
    // Once the run is over serve answers such requests their natural length again.
    expect(await (await fetch(`${fake.url}/_stormlab/output-tokens`)).json()).toMatchObject({ withoutHeader: null });
  }, 60_000);
});
