import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeUpstream } from '../../src/fake-upstream/server.js';
import { createProxy } from '../../src/proxy/proxy-server.js';
import { cli, tempDir } from '../cli/capture-io.js';
import { scriptedGateway } from '../helpers/scripted-gateway.js';

/** One layer that never retries, so every retry behind the gateway is the gateway's; the fault is injected at the proxy. */
const SCENARIO = `
name: app-through-proxy
duration: 1s
drain: 10s
arrival: { type: constant, rate: 30 }
tokens: { prompt: 50, completion: 10 }
layers:
  - { name: llm, retry: { policy: none } }
upstream:
  faults: [{ kind: errors, from: 0s, to: 10m, rate: 0.5, status: 503 }]
  models:
    - { name: primary, slots: 64, queue: 64, ttft: 5ms, tpot: 0 }
live: { connections: 16 }
`;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

describe('stormlab run --mode live --target <app> --upstream <stormlab proxy>', () => {
  it('injects the faults at the proxy in front of the real model and measures both hops', async () => {
    // The "real" model: a second stormlab serve, with no faults of its own.
    const model = await createFakeUpstream({
      upstream: { models: [{ name: 'primary', slots: 64, queue: 64, ttftMs: 5, tpotMs: 0 }] },
      port: 0,
    });
    closers.push(() => model.close());
    const proxy = await createProxy({ upstream: model.url, port: 0 });
    closers.push(() => proxy.close());
    // The app under test: retries a 5xx up to 3 times, talking to the proxy as if it were the model.
    const app = await scriptedGateway({ upstream: proxy.url, attempts: 3, backoffMs: 0 });
    closers.push(() => app.close());
    const dir = tempDir({ 'app.yaml': SCENARIO });
    const r = await cli(
      [
        'run',
        join(dir, 'app.yaml'),
        '--mode',
        'live',
        '--target',
        app.url,
        '--upstream',
        proxy.url,
        '--settle-quiet',
        '100ms',
        '--no-ui',
        '--json',
        'out.json',
      ],
      { cwd: dir },
    );
    expect(r.code).toBe(0);
    const v = JSON.parse(r.files.get('out.json') ?? '{}').variants[0];
    expect(v.amplification).toBe(1);
    expect(app.counts.received).toBe(30);
    const hop = v.live.upstream;
    expect(hop.sent).toBe(30);
    expect(hop.reached).toBe(app.counts.forwarded);
    expect(hop.status['503']).toBeGreaterThan(0);
    expect(hop.reached).toBeGreaterThan(30);
    expect(Object.values(hop.status as Record<string, number>).reduce((a, b) => a + b, 0)).toBe(hop.reached);
    expect(r.out).toMatch(/^total amplification +[\d.]+×$/m);
    // What the proxy let through reached the model; the faults are the proxy's own again after the run.
    const stats = proxy.stats();
    const faulted = stats.routes[0].status['503'];
    expect(model.stats().routes[0].requests).toBe(hop.reached - faulted);
    expect(proxy.faults()).toEqual([]);
  });
});
