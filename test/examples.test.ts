import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../src/engine/manual-clock.js';
import { main } from '../examples/guard-openai-call.js';
import { drive } from './helpers/drive.js';
import { describeWithRedis, dropPrefix, REDIS_URL, testPrefix, testRedis } from './helpers/redis.js';

describe('examples', () => {
  it('the README engine example is examples/guard-openai-call.ts, verbatim', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const example = readFileSync(new URL('../examples/guard-openai-call.ts', import.meta.url), 'utf8');
    expect(readme).toContain(example.trim());
  });

  it('guard-openai-call retries the 429s, honouring retry-after-ms, and answers', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const clock = new ManualClock(0);
    const r = await drive(clock, main(clock));
    log.mockRestore();
    expect(r).toMatchObject({ ok: true, attempts: 3, target: 'gpt-4o', degraded: false });
    expect(r.value.choices[0].message.content).toBe('Paris.');
    expect(clock.now()).toBeGreaterThanOrEqual(400);
  });
});

describe('examples/openai-sdk-guarded.ts', () => {
  it('runs the official openai SDK through the engine against the fake upstream, retrying its 429s', async () => {
    const { createFakeUpstream } = await import('../src/fake-upstream/server.js');
    const { SeededRandom } = await import('../src/engine/random.js');
    const { main: sdkMain } = await import('../examples/openai-sdk-guarded.js');
    const upstream = await createFakeUpstream({
      upstream: {
        models: [{ name: 'primary', slots: 8, queue: 8, ttftMs: 0, tpotMs: 0 }],
        // The first request's coin comes up 429 with this seed and rate; later ones mostly 200.
        faults: [{ kind: 'errors', fromMs: 0, toMs: Infinity, rate: 0.5, status: 429, retryAfterMs: 5 }],
      },
      port: 0,
      random: new SeededRandom(3),
    });
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      const r = await sdkMain(upstream.url);
      expect(r.choices[0].message.content).toBeTruthy();
      expect(r.usage?.total_tokens).toBeGreaterThan(0);
      const stats = upstream.stats() as { models: Array<{ byStatus: Record<string, number> }> };
      const byStatus = stats.models[0].byStatus;
      expect(byStatus['200']).toBe(1);
      expect(byStatus['429']).toBeGreaterThanOrEqual(1); // the engine retried past at least one 429
      expect(log.mock.calls.some(([line]) => String(line).startsWith('tokens: reserved'))).toBe(true);
      expect(log.mock.calls.filter(([line]) => String(line).startsWith('retry #')).length).toBe(byStatus['429'] ?? 0);
    } finally {
      log.mockRestore();
      await upstream.close();
    }
  });
});

await describeWithRedis('examples/redis-shared-guard.ts', () => {
  it('is in the README verbatim, and two gateways running it share state in Redis', async () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    expect(readme).toContain(
      readFileSync(new URL('../examples/redis-shared-guard.ts', import.meta.url), 'utf8').trim(),
    );
    const { main: gateway } = await import('../examples/redis-shared-guard.js');
    const prefix = testPrefix('example');
    const admin = testRedis();
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      const answers = await Promise.all([gateway(REDIS_URL, prefix), gateway(REDIS_URL, prefix)]);
      expect(answers.map((a) => a.text)).toEqual(['Paris.', 'Paris.']);
      // Both first attempts reached one shared budget window; both spent from one bucket.
      const [budget] = await admin.keys(`${prefix}:w:guard:budget:*`);
      const firsts = Object.entries(await admin.hgetall(budget)).filter(([k]) => k.endsWith(':0'));
      expect(firsts.reduce((n, [, v]) => n + Number(v), 0)).toBe(2);
      const [bucket] = (await admin.keys(`${prefix}:b:limit:model_tpm:*`)).filter((k) => !k.endsWith(':sharers'));
      expect(await admin.zcard(`${bucket}:sharers`)).toBe(2); // both drew on the one shared limit
      expect(Number(await admin.hget(bucket, 'o'))).toBe(0);
    } finally {
      log.mockRestore();
      await dropPrefix(admin, prefix);
      await admin.quit();
    }
  });
});

describe('examples/prometheus-metrics.ts', () => {
  it('is in the README verbatim and serves the guard metrics at /metrics', async () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    expect(readme).toContain(
      readFileSync(new URL('../examples/prometheus-metrics.ts', import.meta.url), 'utf8').trim(),
    );
    const { main: serve } = await import('../examples/prometheus-metrics.js');
    const server = await serve(0);
    try {
      const { port } = server.address() as { port: number };
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      const text = await res.text();
      expect(text).toContain('stormlab_attempts_total{guard="chat",target="default",retry="false"} 1');
      expect(text).toContain('stormlab_breaker_state{guard="chat",target="default",state="closed"} 1');
      expect((await fetch(`http://127.0.0.1:${port}/nope`)).status).toBe(404);
    } finally {
      server.close();
    }
  });
});
