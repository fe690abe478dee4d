import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { classifyStatus } from '../../src/engine/classify.js';
import { coreOf, Guard } from '../../src/engine/guard.js';
import { ManualClock } from '../../src/engine/manual-clock.js';
import { SeededRandom } from '../../src/engine/random.js';
import { guardMetrics, storeMetrics, type ObservableStore } from '../../src/integrations/prometheus-metrics.js';
import type { StoreEvent } from '../../src/engine/stores/redis-store.js';

/** One value of a metric by its labels, from the registry as a scrape sees it. */
async function value(registry: Registry, name: string, labels: Record<string, string>): Promise<number | undefined> {
  const metric = registry.getSingleMetric(name);
  if (metric === undefined) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  const found = values.find((v) => Object.entries(labels).every(([k, x]) => String(v.labels[k]) === x));
  return found?.value;
}

describe('guardMetrics', () => {
  it('counts attempts, retries, sheds, trips and tokens from the guard events', async () => {
    const registry = new Registry();
    const clock = new ManualClock(0);
    const guard = new Guard({
      clock,
      random: new SeededRandom(1),
      name: 'chat',
      targets: ['gpt-4o'],
      maxAttempts: 2,
      breaker: { minimumCalls: 4, failureRatio: 0.5 },
      throttle: false,
      retryBudget: false,
      limits: [{ name: 'tpm', unit: 'tokens', rate: 10_000, per: 'minute' }],
    });
    const stop = guardMetrics(guard, { registry });
    const failed = classifyStatus(503);
    const ok = classifyStatus(200);
    // Two calls that fail twice each (4 failures trip the breaker), then one that is shed.
    for (let i = 0; i < 2; i++) {
      const call = coreOf(guard).start(clock.now(), { tokens: 100 });
      expect(call.next(clock.now())).toBe(1);
      expect(call.complete(failed, 10, -1, clock.now())).toBe(2); // retry
      expect(call.next(clock.now())).toBe(1);
      call.complete(failed, 10, -1, clock.now());
    }
    const shed = coreOf(guard).start(clock.now(), { tokens: 100 });
    expect(shed.next(clock.now())).toBe(4);
    clock.advance(60_000);
    const good = coreOf(guard).start(clock.now(), { tokens: 100 });
    good.next(clock.now());
    good.complete(ok, 10, 42, clock.now());

    expect(await value(registry, 'stormlab_attempts_total', { guard: 'chat', target: 'gpt-4o', retry: 'false' })).toBe(
      3,
    );
    expect(await value(registry, 'stormlab_attempts_total', { guard: 'chat', target: 'gpt-4o', retry: 'true' })).toBe(
      2,
    );
    expect(await value(registry, 'stormlab_retries_total', { guard: 'chat', class: 'server_error' })).toBe(2);
    expect(await value(registry, 'stormlab_shed_total', { guard: 'chat', reason: 'breaker' })).toBe(1);
    expect(await value(registry, 'stormlab_breaker_trips_total', { guard: 'chat', cause: 'failure_ratio' })).toBe(1);
    expect(await value(registry, 'stormlab_tokens_reserved_total', { guard: 'chat' })).toBe(600); // the shed call reserved, then released
    expect(await value(registry, 'stormlab_tokens_used_total', { guard: 'chat' })).toBe(42);
    // Gauges are read at scrape time: the breaker, after a good probe, is half-open.
    expect(await value(registry, 'stormlab_breaker_state', { guard: 'chat', state: 'half_open' })).toBe(1);
    expect(await value(registry, 'stormlab_breaker_state', { guard: 'chat', state: 'open' })).toBe(0);
    expect(await value(registry, 'stormlab_limit_available', { guard: 'chat', dimension: 'tpm' })).toBeCloseTo(
      10_000 - 42,
      6,
    );

    stop();
    const again = coreOf(guard).start(clock.now());
    again.next(clock.now());
    expect(await value(registry, 'stormlab_attempts_total', { guard: 'chat', retry: 'false' })).toBe(3); // no longer counted
    expect(await value(registry, 'stormlab_breaker_state', { guard: 'chat' })).toBeUndefined();
  });

  it('puts many guards in one set of metrics, told apart by their name', async () => {
    const registry = new Registry();
    const clock = new ManualClock(0);
    const a = new Guard({ clock, random: new SeededRandom(1), name: 'a', throttle: { minRequests: 0 } });
    const b = new Guard({ clock, random: new SeededRandom(2), name: 'b' });
    guardMetrics(a, { registry });
    guardMetrics(b, { registry });
    const call = coreOf(a).start(clock.now());
    call.next(clock.now());
    call.complete(classifyStatus(429), 5, -1, clock.now());
    expect(await value(registry, 'stormlab_attempts_total', { guard: 'a' })).toBe(1);
    expect(await value(registry, 'stormlab_attempts_total', { guard: 'b' })).toBeUndefined();
    expect(await value(registry, 'stormlab_throttle_drop_probability', { guard: 'a' })).toBeCloseTo(0.5, 9); // (1 − 0) / (1 + 1)
    expect(await value(registry, 'stormlab_throttle_drop_probability', { guard: 'b' })).toBe(0);
    expect(await value(registry, 'stormlab_retry_budget_balance', { guard: 'b' })).toBeGreaterThan(0);
    const text = await registry.metrics();
    expect(text).toContain('# HELP stormlab_shed_total Calls refused locally');
    expect(text).toContain('stormlab_attempts_total{guard="a",target="default",retry="false"} 1');
  });

  it('says whether a shared store answers', async () => {
    const registry = new Registry();
    const listeners: Array<(e: StoreEvent) => void> = [];
    const store: ObservableStore & { available: boolean } = {
      prefix: 'myapp',
      available: true,
      subscribe: (l) => (listeners.push(l), () => listeners.splice(listeners.indexOf(l), 1)),
    };
    storeMetrics(store, { registry, prefix: 'gw_' });
    expect(await value(registry, 'gw_store_available', { store: 'myapp' })).toBe(1);
    store.available = false;
    for (const l of listeners) l({ type: 'store_unavailable', at: 1, error: 'ECONNREFUSED' });
    expect(await value(registry, 'gw_store_available', { store: 'myapp' })).toBe(0);
    expect(await value(registry, 'gw_store_unavailable_total', { store: 'myapp' })).toBe(1);
  });
});
