import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fleetKeys, type LiveShareJob, type ShareReady } from '../../src/explore/fleet-protocol.js';
import { driveShare } from '../../src/explore/fleet-share.js';
import { describeWithRedis, dropPrefix, testPrefix, testRedis } from '../helpers/redis.js';

const SCENARIO = {
  name: 'share-wait',
  seed: 1,
  duration: '1s',
  arrival: { type: 'constant', rate: 10 },
  tokens: { prompt: 10, completion: 2 },
  layers: [{ name: 'llm', retry: { policy: 'none' }, models: ['m'] }],
  upstream: { models: [{ name: 'm', slots: 10, queue: 0, ttft: '5ms', tpot: '1ms' }] },
};

function job(run: string, share: number): LiveShareJob {
  return {
    run,
    share,
    of: 2,
    name: 'share-wait',
    scenario: { file: 'share-wait.json', text: JSON.stringify(SCENARIO) },
    target: 'http://127.0.0.1:9',
    headers: {},
    connections: 1,
    sharedState: false,
    // The coordinator's --fleet-wait: a worker does not count it down (it waits while the coordinator is alive).
    waitMs: 1,
  };
}

/** The Redis client a worker drives with, counting its polls of the run's control (one MULTI each). */
function counting(redis: Redis): { redis: Redis; polls: () => number } {
  let polls = 0;
  const proxy = new Proxy(redis, {
    get(target, key, receiver) {
      if (key === 'multi')
        return (...args: unknown[]) => {
          polls++;
          return (target.multi as (...a: unknown[]) => unknown)(...args);
        };
      const v = Reflect.get(target, key, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { redis: proxy, polls: () => polls };
}

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setImmediate(resolve));
}

await describeWithRedis('a fleet worker holding a share, before the start', () => {
  let redis: Redis;
  const prefix = testPrefix('fleet-share');
  beforeAll(() => {
    redis = testRedis();
  });
  afterAll(async () => {
    await dropPrefix(redis, `stormlab:fleet:${prefix}`);
    redis.disconnect();
  });

  it('waits past the fleet wait while the coordinator is alive; when it lapses, gives the share up and takes its ready entry back', async () => {
    const run = `${prefix}-alive`;
    const keys = fleetKeys(run);
    await redis.set(keys.alive, '1', 'PX', 60_000);
    const c = counting(redis);
    let settled = false;
    const out = driveShare(job(run, 1), {
      redis: c.redis,
      worker: 'w1',
      progress: async () => {},
      stop: new AbortController().signal,
      timings: { pollMs: 1 },
    }).finally(() => {
      settled = true;
    });
    await until(async () => (await redis.hget(keys.ready, '1')) !== null);
    const ready = JSON.parse((await redis.hget(keys.ready, '1'))!) as ShareReady;
    expect(ready.worker).toBe('w1');
    // Many polls, each after the 1 ms its job gives as the fleet wait: still waiting, still ready.
    await until(() => c.polls() >= 20);
    expect(settled).toBe(false);
    expect(await redis.hexists(keys.ready, '1')).toBe(1);
    await redis.del(keys.alive);
    expect(await out).toEqual({ run, share: 1, skipped: 'no start came: the coordinator went away' });
    expect(await redis.hexists(keys.ready, '1')).toBe(0);
  });

  it('a stop before the start: skipped, and no longer counted as ready', async () => {
    const run = `${prefix}-stop`;
    const keys = fleetKeys(run);
    await redis.set(keys.alive, '1', 'PX', 60_000);
    const out = driveShare(job(run, 0), {
      redis,
      worker: 'w2',
      progress: async () => {},
      stop: new AbortController().signal,
      timings: { pollMs: 1 },
    });
    await until(async () => (await redis.hget(keys.ready, '0')) !== null);
    await redis.hset(keys.control, 'stop', '1');
    expect(await out).toEqual({ run, share: 0, skipped: 'stopped before the start' });
    expect(await redis.hexists(keys.ready, '0')).toBe(0);
  });
});
