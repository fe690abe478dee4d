import { Redis } from 'ioredis';
import { Guard, systemClock, systemRandom } from 'stormlab/engine';
import { RedisStore } from 'stormlab/redis';

// One gateway process. Start as many as you like with the same prefix: they share one retry
// budget, one throttle window and the breaker's counts per target, and the limits below.
export async function main(redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', prefix = 'myapp') {
  const redis = new Redis(redisUrl);
  const store = new RedisStore({
    redis,
    clock: systemClock, // epoch-based: every process reads the same timeline
    prefix,
    onEvent: (e) => console.warn(`[stormlab] ${e.type}`), // store_unavailable → local limits until store_recovered
  });
  const guard = new Guard({
    clock: systemClock,
    random: systemRandom(),
    store,
    limits: [{ name: 'model_tpm', unit: 'tokens', rate: 90_000, per: 'minute' }],
  });

  await store.sync(); // optional: learn the shared state (and join the limit's sharers) first
  const answer = await guard.run(async () => ({ text: 'Paris.', usage: { total_tokens: 42 } }), {
    tokens: 120,
    usage: (r) => r.usage.total_tokens,
  });
  console.log(answer.text);

  await store.close(); // sends what is left; the client stays yours
  await redis.quit();
  return answer;
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
