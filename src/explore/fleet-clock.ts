import type { Redis } from 'ioredis';
import { preciseClock } from '../platform/system-clock.js';

/** Redis's clock (`TIME`), epoch ms: the fleet's one timeline, the coordinator's Redis. */
export async function redisNowMs(redis: Redis): Promise<number> {
  const [s, us] = await redis.time();
  return Number(s) * 1000 + Number(us) / 1000;
}

/**
 * This process's clock against Redis's: `offsetMs` is Redis's time minus ours, from the `TIME`
 * round trip with the least delay of `samples` (its time taken as read halfway through it).
 */
export async function clockOffset(redis: Redis, samples = 5): Promise<{ offsetMs: number; rttMs: number }> {
  let best = { offsetMs: 0, rttMs: Number.POSITIVE_INFINITY };
  for (let i = 0; i < samples; i++) {
    const sent = preciseClock.now();
    const at = await redisNowMs(redis);
    const back = preciseClock.now();
    const rtt = back - sent;
    if (rtt < best.rttMs) best = { offsetMs: at - (sent + back) / 2, rttMs: rtt };
  }
  return { offsetMs: Math.round(best.offsetMs * 1000) / 1000, rttMs: Math.round(best.rttMs * 1000) / 1000 };
}
