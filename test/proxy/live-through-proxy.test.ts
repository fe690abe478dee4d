import { afterEach, describe, expect, it } from 'vitest';
import { createProxy } from '../../src/proxy/proxy-server.js';
import { scriptedGateway } from '../helpers/scripted-gateway.js';
import { expectSecondHop, healthyModel, runTwoHops, twoHopScenario } from '../helpers/two-hop-run.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

describe('stormlab run --mode live --target <app> --upstream <stormlab proxy>', () => {
  it('injects the faults at the proxy in front of the real model and measures both hops', async () => {
    // The "real" model: a second stormlab serve, with no faults of its own.
    const model = await healthyModel();
    closers.push(() => model.close());
    const proxy = await createProxy({ upstream: model.url, port: 0 });
    closers.push(() => proxy.close());
    // The app under test: retries a 5xx up to 3 times, talking to the proxy as if it were the model.
    const app = await scriptedGateway({ upstream: proxy.url, attempts: 3, backoffMs: 0 });
    closers.push(() => app.close());
    const r = await runTwoHops(twoHopScenario(), app.url, proxy.url);
    expect(r.code).toBe(0);
    expectSecondHop(r.variant, app.counts);
    expect(r.out).toMatch(/^total amplification +[\d.]+×$/m);
    // What the proxy let through reached the model; the faults are the proxy's own again after the run.
    const faulted = proxy.stats().routes[0].status['503'];
    expect(model.stats().routes[0].requests).toBe(r.variant.live.upstream.reached - faulted);
    expect(proxy.faults()).toEqual([]);
  });
});
