import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { ShedError } from '../src/engine/errors.js';
import { RedisStore, type StoreEvent } from '../src/engine/stores/redis-store.js';
import { guardedFetch } from '../src/integrations/guarded-fetch.js';
import { systemClock } from '../src/platform/system-clock.js';
import type { Counts } from './shared-counts.js';

/**
 * One gateway process for the shared suite:
 *
 *   node --import tsx bench/shared-gateway-child.ts <memory|redis> <url> <rps> <seconds> <quotaRpm> [redisUrl] [prefix]
 *
 * A `guardedFetch` whose only active part is a limiter set to the provider's quota
 * (`rate: quotaRpm, per: 'minute'`): one attempt, no retry budget, no throttle, no breaker, so
 * every local refusal is the limiter's. `memory`: the default per-process store; `redis`: a
 * `RedisStore` on `prefix`, shared with the other gateways.
 *
 * Prints `{"ready":true}` once set up, then waits for a line `go <epochMs>` on stdin: joins the
 * shared bucket (redis), and from that moment sends `rps` chat requests per second, open loop
 * (on schedule, whatever the answers), for `seconds`. When every request has ended it prints
 * one JSON line of counts and exits. It exits too if stdin ends first (the parent is gone).
 */
const [
  mode = 'memory',
  url = '',
  rpsArg = '8',
  secondsArg = '5',
  quotaArg = '600',
  redisUrl = 'redis://127.0.0.1:6379',
  prefix = 'stormlab-bench',
] = process.argv.slice(2);
const rps = Number(rpsArg);
const seconds = Number(secondsArg);
const quota = Number(quotaArg);
/** A request still unanswered after this is given up (counted under `errors`), so the run ends. */
const REQUEST_TIMEOUT_MS = 10_000;
const BODY = JSON.stringify({ model: 'primary', messages: [{ role: 'user', content: 'Say hi.' }], max_tokens: 8 });

const counts: Counts = { sent: 0, status: {}, shed: {}, errors: 0, storeEvents: [] };
const bump = (o: Record<string, number>, k: string): void => void (o[k] = (o[k] ?? 0) + 1);

if (mode !== 'memory' && mode !== 'redis') {
  console.error(`shared-gateway-child: mode must be memory or redis, got ${JSON.stringify(mode)}`);
  process.exit(2);
}
const redis = mode === 'redis' ? new Redis(redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 2000 }) : undefined;
redis?.on('error', () => {}); // the store reports outages as events, counted below
let store: RedisStore | undefined;

/** The gateway's guarded fetch: only the limiter decides. */
function gatewayFetch(): typeof fetch {
  return guardedFetch({
    store,
    maxAttempts: 1,
    retryBudget: false,
    throttle: false,
    breaker: false,
    limits: [{ name: 'rpm', unit: 'requests', rate: quota, per: 'minute' }],
  });
}

/**
 * Before the clock starts: the first fetch loads undici and the first calls compile the
 * guarded path, which on a busy machine stalls the event loop for a second or more. A
 * limit-free guard sends a few requests to a route outside any quota.
 */
async function warmUp(): Promise<void> {
  const warm = guardedFetch({ maxAttempts: 1, retryBudget: false, throttle: false, breaker: false });
  for (let i = 0; i < 50; i++) await (await warm(`${url}/v1/models`)).arrayBuffer();
  await redis?.ping();
}

let gfetch: typeof fetch;

async function one(): Promise<void> {
  counts.sent++;
  try {
    const res = await gfetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: BODY,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    await res.arrayBuffer();
    bump(counts.status, String(res.status));
  } catch (err) {
    if (err instanceof ShedError) bump(counts.shed, err.reason);
    else counts.errors++;
  }
}

/** Sends on schedule from `startAt` for `seconds`; resolves when every request has ended. */
function load(startAt: number): Promise<void> {
  const total = Math.round(rps * seconds);
  const pending = new Set<Promise<void>>();
  return new Promise((resolve) => {
    const tick = (): void => {
      const due = Math.min(total, Math.floor(((Date.now() - startAt) * rps) / 1000) + 1);
      while (counts.sent < due) {
        const p = one();
        pending.add(p);
        void p.finally(() => pending.delete(p));
      }
      if (counts.sent < total) return;
      clearInterval(timer);
      void Promise.all(pending).then(() => resolve());
    };
    const timer = setInterval(tick, 5);
  });
}

const lines = createInterface({ input: process.stdin });
lines.on('close', () => process.exit(1));
await warmUp();
console.log(JSON.stringify({ ready: true }));
const go = await new Promise<string>((resolve) => lines.once('line', resolve));
const startAt = Number(go.split(' ')[1]);
// The store is made now, not at start-up: a process joins a shared bucket on its first sync
// and counts as a sharer for `activeMs` (2 s) unless it draws, so gateways that started
// seconds apart would not all count each other yet. Made at `go`, they all join within a few
// ms, and the background syncs before `startAt` tell each that it has four sharers.
if (redis !== undefined) {
  store = new RedisStore({
    redis,
    clock: systemClock,
    prefix,
    onEvent: (e: StoreEvent) => counts.storeEvents.push(e.type),
  });
}
gfetch = gatewayFetch();
await store?.sync();
await new Promise((r) => setTimeout(r, Math.max(0, startAt - Date.now())));
await load(startAt);
await store?.close();
await redis?.quit();
lines.removeAllListeners('close');
process.stdout.write(`${JSON.stringify(counts)}\n`, () => process.exit(0));
