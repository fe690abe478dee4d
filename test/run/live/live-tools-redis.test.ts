import { afterAll, afterEach, expect, it } from 'vitest';
import { SeededRandom } from '../../../src/engine/random.js';
import { RedisIdempotencyStore } from '../../../src/engine/stores/redis-idempotency-store.js';
import { createFakeUpstream, type FakeUpstream } from '../../../src/fake-upstream/server.js';
import { LiveRun } from '../../../src/run/live/live-run.js';
import { runSpecOf } from '../../../src/run/run-spec.js';
import { loadScenario } from '../../../src/scenario/load-scenario.js';
import { describeWithRedis, dropPrefix, testPrefix, testRedis } from '../../helpers/redis.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});

/** Five root tasks, each sending one email with an idempotency key; `faults` of the email service. */
const KEYED = (faults = '[]') => `
name: keyed-live
duration: 1s
drain: 30s
idempotency: redis
arrival: { type: constant, rate: 5 }
tokens: { prompt: 10, completion: 10 }
layers:
  - name: agent
    retry: { policy: naive, attempts: 2 }
    tools: [{ kind: tool, tool: gmail.send, sideEffect: true, timeout: 150ms, idempotency: true }]
  - { name: llm }
tools:
  gmail.send: { latency: 10ms, faults: ${faults} }
upstream:
  models: [{ name: m, slots: 64, queue: 64, ttft: 5ms, tpot: 0ms }]
variants: { only: {} }
`;

const redis = testRedis();
const prefix = testPrefix('live-tools');
afterAll(async () => {
  await dropPrefix(redis, prefix);
  redis.disconnect();
});

/** One "process": its own fake tool API, its own Redis client and store on the shared prefix, one live run. */
async function process_(text: string, shared: boolean): Promise<FakeUpstream & { run: LiveRun }> {
  const s = loadScenario(text, { variant: 'only' });
  expect(s.idempotency).toBe('redis');
  const fake = await createFakeUpstream({ upstream: s.upstream, port: 0, random: new SeededRandom(s.seed) });
  open.push(fake);
  const client = testRedis();
  open.push({ close: async () => void client.disconnect() });
  const run = new LiveRun(runSpecOf(s, 'only'), { connections: 8 });
  open.push(run);
  await run.start({
    url: fake.url,
    toolStats: () => fake.toolStats(),
    ...(shared ? { idempotencyStore: new RedisIdempotencyStore({ redis: client, prefix }) } : {}),
  });
  return Object.assign(fake, { run });
}

await describeWithRedis('live tool calls with idempotency: redis', () => {
  it('two processes, each behind its own tool API, share the keys in Redis: the second sends nothing again', async () => {
    const first = await process_(KEYED(), true);
    expect(first.toolStats()[0]).toMatchObject({ requests: 5, executions: 5, duplicates: 0 });
    const second = await process_(KEYED(), true);
    // Every key is done in Redis: the receipt comes back and no request reaches the second API.
    expect(second.toolStats()[0]).toMatchObject({ requests: 0, executions: 0 });
    // Without the shared store each API keeps its own keys: the second does every effect again.
    const alone = await process_(KEYED(), false);
    expect(alone.toolStats()[0]).toMatchObject({ requests: 5, executions: 5 });
  });

  it('a lost answer keeps the key in progress: the retry is a conflict, not a second email', async () => {
    await dropPrefix(redis, prefix);
    const fake = await process_(KEYED('[{ kind: lost }]'), true);
    expect(fake.toolStats()[0]).toMatchObject({ requests: 5, executions: 5, duplicates: 0, status: { lost: 5 } });
    // Each call's second attempt found its key in progress in Redis: a 409, answered without a request.
    const t = fake.run.result().tools![0];
    expect(t.attempts).toBe(20);
    expect(t.share['409']).toBeGreaterThan(0);
    // Those conflicts are counted with the service's, though no request carried them.
    expect(fake.toolStats()[0].conflicts).toBe(0);
    expect(t.conflicts).toBeGreaterThan(0);
  });
});
