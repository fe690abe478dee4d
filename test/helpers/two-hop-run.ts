import { join } from 'node:path';
import { expect } from 'vitest';
import { createFakeUpstream, type FakeUpstream } from '../../src/fake-upstream/server.js';
import { type CliRun, cli, tempDir } from '../cli/capture-io.js';

/**
 * A live run over two hops — harness → app (or gateway) → upstream (`stormlab serve`, or a
 * `stormlab proxy` in front of a model) — as `test/cli/live-gateway.test.ts` and
 * `test/proxy/live-through-proxy.test.ts` run it. One layer that never retries, so every retry
 * that reaches the upstream is the app's; the scenario's fault (half the requests answered 503)
 * is injected at `--upstream`.
 */
export const TWO_HOP_SCENARIO = `
name: two-hops
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

/** The roots the scenario sends: 30 a second for a second. */
export const TWO_HOP_ROOTS = 30;

/** The scenario written to a fresh directory: its path. */
export function twoHopScenario(): string {
  return join(tempDir({ 'two-hops.yaml': TWO_HOP_SCENARIO }), 'two-hops.yaml');
}

/** A `stormlab serve` with the scenario's model and no faults of its own (the upstream, or the "real" model behind a proxy). */
export function healthyModel(): Promise<FakeUpstream> {
  return createFakeUpstream({
    upstream: { models: [{ name: 'primary', slots: 64, queue: 64, ttftMs: 5, tpotMs: 0 }] },
    port: 0,
  });
}

/** `stormlab run <scenario> --mode live --target <target> --upstream <upstream> …`, its result JSON's first variant read. */
export async function runTwoHops(
  scenario: string,
  target: string,
  upstream: string,
  extra: string[] = ['--settle-quiet', '100ms'],
): Promise<CliRun & { variant: Record<string, any> }> {
  const r = await cli([
    'run',
    scenario,
    '--mode',
    'live',
    '--target',
    target,
    '--upstream',
    upstream,
    ...extra,
    '--no-ui',
    '--json',
    'out.json',
  ]);
  const json = r.files.get('out.json');
  return { ...r, variant: json === undefined ? {} : JSON.parse(json).variants[0] };
}

/**
 * What both hops must show when the app retries a 5xx: the harness's hop never retried (30
 * roots, amplification 1), the second hop's requests are the app's forwards as the upstream
 * counted them, every one with a status, some 503s, and more than one try a root.
 */
export function expectSecondHop(variant: Record<string, any>, app: { received: number; forwarded: number }): void {
  expect(variant.amplification).toBe(1);
  expect(app.received).toBe(TWO_HOP_ROOTS);
  const hop = variant.live.upstream;
  expect(hop.sent).toBe(TWO_HOP_ROOTS);
  expect(hop.reached).toBe(app.forwarded);
  expect(hop.amplification).toBeCloseTo(app.forwarded / TWO_HOP_ROOTS, 5);
  expect(hop.status['503']).toBeGreaterThan(0);
  expect(hop.reached).toBeGreaterThan(TWO_HOP_ROOTS);
  expect(Object.values(hop.status as Record<string, number>).reduce((a, b) => a + b, 0)).toBe(hop.reached);
}
