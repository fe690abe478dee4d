import { describe, expect, it } from 'vitest';
import { ENGINE_PROFILES } from '../../src/engine/engine-profiles.js';
import { ManualClock } from '../../src/engine/manual-clock.js';
import { SeededRandom } from '../../src/engine/random.js';
import type { EngineHttpOptions } from '../../src/integrations/engine-http-options.js';
import { guardedFetch } from '../../src/integrations/guarded-fetch.js';
import { HTTP_DEFAULTS } from '../../src/integrations/http-defaults.js';
import { drive } from '../helpers/drive.js';

/**
 * The integrations' breaker defaults (the http profile) against the core profile's: 300 calls, one every 200 ms, to a
 * provider that fails a share of requests with a 503 (seeded), each through guardedFetch with
 * its defaults otherwise. Success is the share of calls that got a 200; attempts per call is
 * what reached the provider.
 */
async function brownout(failShare: number, options: EngineHttpOptions) {
  const clock = new ManualClock(1_000_000);
  const draw = new SeededRandom(11);
  let attempts = 0;
  const upstream: typeof fetch = async () => {
    attempts++;
    return draw.next() < failShare
      ? new Response('{"error":{"message":"busy","type":"server_error"}}', { status: 503 })
      : new Response('{"choices":[]}', { status: 200, headers: { 'content-type': 'application/json' } });
  };
  const f = guardedFetch({ clock, random: new SeededRandom(3), fetch: upstream, ...options });
  const calls = 300;
  let ok = 0;
  let shed = 0;
  const reasons: Record<string, number> = {};
  for (let i = 0; i < calls; i++) {
    const res = await drive(clock, f('https://api.example.com/v1/chat/completions', { method: 'POST', body: '{}' }));
    if (res.status === 200) ok++;
    const reason = res.headers.get('x-stormlab-shed');
    if (reason !== null) {
      shed++;
      reasons[reason] = (reasons[reason] ?? 0) + 1;
    }
    clock.advance(200);
  }
  return { success: ok / calls, shed: shed / calls, attemptsPerCall: attempts / calls, reasons };
}

// The core profile's settings (new Guard()'s), passed to guardedFetch over its own.
const { retryBudget, throttle, breaker } = ENGINE_PROFILES.core;
const ENGINE = { retryBudget, throttle, breaker };
const NO_ENGINE = { breaker: false, throttle: false, retryBudget: false } as const;

describe('breaker, throttle and budget defaults of the HTTP integrations (README: Breaker defaults)', () => {
  it('a 50 % brownout keeps goodput close to unguarded retries; the core defaults shed it', async () => {
    const ours = await brownout(0.5, {});
    const engine = await brownout(0.5, ENGINE);
    const none = await brownout(0.5, NO_ENGINE);
    console.log('50 % brownout', { http: ours, core: engine, unguarded: none });
    expect(HTTP_DEFAULTS.breaker.failureRatio).toBe(0.8);
    expect(ours.success).toBeGreaterThanOrEqual(0.8);
    expect(ours.success).toBeGreaterThanOrEqual(none.success - 0.05);
    expect(engine.success).toBeLessThan(0.5);
  });

  it('an outage still closes the door: far fewer attempts reach the provider than calls', async () => {
    const ours = await brownout(1, {});
    const none = await brownout(1, NO_ENGINE);
    console.log('outage', { integration: ours, unguarded: none });
    expect(ours.success).toBe(0);
    expect(ours.attemptsPerCall).toBeLessThan(0.2);
    expect(none.attemptsPerCall).toBe(3);
  });
});
