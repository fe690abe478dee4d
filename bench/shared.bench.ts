import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { Guard } from '../src/engine/guard.js';
import { SeededRandom } from '../src/engine/random.js';
import { RedisStore } from '../src/engine/stores/redis-store.js';
import { createFakeUpstream } from '../src/fake-upstream/server.js';
import { systemClock } from '../src/platform/system-clock.js';
import { printTable, timeAsync, type Row } from './measure.js';
import type { Counts } from './shared-counts.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CHILD = fileURLToPath(new URL('./shared-gateway-child.ts', import.meta.url));
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The provider's requests-per-minute quota, and the limit every gateway is given. */
const QUOTA_RPM = 600;
const GATEWAYS = 4;
/**
 * Requests/s each gateway offers. The provider's quota is a sliding 60-second window and the
 * limiter a bucket of one minute's worth (burst = rate), so within a 5-second run both act as
 * a budget of 600, not as 10/s. Each gateway therefore offers the whole quota in the run
 * (120/s × 5 s = 600): alone it would stay within its limit, together they offer 4×.
 */
const RPS_PER_GATEWAY = 120;
const SECONDS = 5;
/** A child that has not answered by then is killed and the suite fails. */
const CHILD_TIMEOUT_MS = 60_000;
/** Lead time between `go` and the first request: every gateway joins the shared bucket and syncs. */
const START_LEAD_MS = 500;

interface RunFigures {
  offered: number;
  /** Chat requests the upstream received (its own count). */
  reached: number;
  ok: number;
  rejected429: number;
  shedLimit: number;
  /** Sheds for other reasons, other statuses, failed requests: all should be 0. */
  other: number;
  storeEvents: number;
}

/** A gateway child; `ready` resolves once it is set up, `go(at)` starts its load, `result()` waits for its counts. */
interface Gateway {
  ready: Promise<void>;
  go(startAt: number): void;
  result(): Promise<Counts>;
  kill(): void;
}

function gateway(mode: 'memory' | 'redis', url: string, prefix: string): Gateway {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      CHILD,
      mode,
      url,
      String(RPS_PER_GATEWAY),
      String(SECONDS),
      String(QUOTA_RPM),
      REDIS_URL,
      prefix,
    ],
    {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async (what: string): Promise<string> => {
    const line = await lines.next();
    if (line.done)
      throw new Error(
        `shared bench: a ${mode} gateway ended before its ${what} (exit ${child.exitCode ?? child.signalCode})`,
      );
    return line.value;
  };
  return {
    ready: next('ready line').then(() => undefined),
    go: (startAt) => child.stdin!.write(`go ${startAt}\n`),
    result: async () => JSON.parse(await next('counts')) as Counts,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** Rejects after `ms` (the timer does not keep the process alive). */
function timeout(ms: number, what: string): Promise<never> {
  return new Promise((_, reject) =>
    setTimeout(() => reject(new Error(`shared bench: ${what} took longer than ${ms} ms`)), ms).unref(),
  );
}

/** One run: a fresh fake upstream with the quota, `GATEWAYS` children offering load at once. */
async function run(mode: 'memory' | 'redis', prefix: string): Promise<RunFigures> {
  const upstream = await createFakeUpstream({
    upstream: { models: [{ name: 'primary', slots: 10_000, queue: 0, ttftMs: 20, tpotMs: 0, rpm: QUOTA_RPM }] },
  });
  const gateways: Gateway[] = [];
  try {
    for (let i = 0; i < GATEWAYS; i++) gateways.push(gateway(mode, upstream.url, prefix));
    await Promise.race([Promise.all(gateways.map((g) => g.ready)), timeout(CHILD_TIMEOUT_MS, 'starting the gateways')]);
    const startAt = Date.now() + START_LEAD_MS;
    for (const g of gateways) g.go(startAt);
    const results = await Promise.race([
      Promise.all(gateways.map((g) => g.result())),
      timeout(CHILD_TIMEOUT_MS, 'the load run'),
    ]);
    const m = upstream.stats().models[0];
    const sum = (pick: (c: Counts) => number): number => results.reduce((a, c) => a + pick(c), 0);
    const statusOther = (c: Counts): number =>
      Object.entries(c.status).reduce((a, [s, n]) => a + (s === '200' || s === '429' ? 0 : n), 0);
    const shedOther = (c: Counts): number =>
      Object.entries(c.shed).reduce((a, [r, n]) => a + (r === 'limit' ? 0 : n), 0);
    return {
      offered: sum((c) => c.sent),
      reached: m.attempts,
      ok: m.byStatus['200'] ?? 0,
      rejected429: m.byStatus['429'] ?? 0,
      shedLimit: sum((c) => c.shed.limit ?? 0),
      other: sum((c) => statusOther(c) + shedOther(c) + c.errors),
      storeEvents: sum((c) => c.storeEvents.length),
    };
  } finally {
    for (const g of gateways) g.kill();
    await upstream.close();
  }
}

/** Deletes every key of `prefix` (SCAN, not KEYS: the Redis may be shared). */
async function dropPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}

/** A client that gives up at once when Redis does not answer, or undefined. */
async function connect(): Promise<Redis | undefined> {
  const redis = new Redis(REDIS_URL, {
    lazyConnect: true,
    connectTimeout: 2000,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
    return redis;
  } catch {
    redis.disconnect();
    return undefined;
  }
}

/**
 * `guard.run` of a resolved no-op with the default guard (budget, throttle, breaker) and one
 * requests/s limit that never refuses, on a MemoryStore and on a RedisStore syncing in the
 * background, interleaved; the best round of each counts, as in the engine suite.
 */
async function overhead(redis: Redis, prefix: string): Promise<{ plain: number; memory: number; redis: number }> {
  const noop = async (): Promise<number> => 1;
  const limits = [{ name: 'rps', unit: 'requests' as const, rate: 1e9, per: 'second' as const }];
  const store = new RedisStore({ redis, clock: systemClock, prefix });
  const memoryGuard = new Guard({ clock: systemClock, random: new SeededRandom(2), limits });
  const redisGuard = new Guard({ clock: systemClock, random: new SeededRandom(2), limits, store });
  const best = { plain: Infinity, memory: Infinity, redis: Infinity };
  try {
    for (let round = 0; round < 3; round++) {
      best.plain = Math.min(best.plain, await timeAsync(noop, 200_000, 5));
      best.memory = Math.min(best.memory, await timeAsync(() => memoryGuard.run(noop), 200_000, 5));
      best.redis = Math.min(best.redis, await timeAsync(() => redisGuard.run(noop), 200_000, 5));
    }
  } finally {
    await store.close();
  }
  return best;
}

/**
 * The shared suite: what a shared state store buys when several gateway processes call one
 * provider. A fake upstream (this process) has a quota of 600 requests/min; four gateway
 * processes each offer 600 requests in 5 s through a guard whose limiter is set to that quota.
 * With per-process state (MemoryStore) each gateway thinks the whole quota is its own and
 * the provider sees 4× its quota and answers 429s; with one RedisStore prefix the gateways
 * share one bucket and shed locally instead. A one-process row compares the cost of
 * `guard.run` on either store. Skipped, with one line, when Redis does not answer.
 */
export async function sharedSuite(): Promise<Row[]> {
  const redis = await connect();
  if (redis === undefined) {
    console.log(`\nshared: skipped, Redis at ${REDIS_URL} does not answer`);
    return [];
  }
  const prefix = `stormlab-bench:shared:${process.pid}:${Date.now()}`;
  try {
    const memory = await run('memory', `${prefix}:unused`);
    const shared = await run('redis', `${prefix}:run`);
    const cost = await overhead(redis, `${prefix}:overhead`);

    /** What one limiter of the quota admits in the run: a full bucket plus its refill. */
    const oneLimiter = QUOTA_RPM + (QUOTA_RPM / 60) * SECONDS;
    const pct = (x: number): string => `${Math.round(x * 100)} %`;
    const n = (x: number): string => x.toLocaleString('en-US');
    const line = (name: string, r: RunFigures): Record<string, string | number> => ({
      store: name,
      offered: n(r.offered),
      'reached upstream': n(r.reached),
      'reached /s': r.reached / SECONDS,
      'of quota': pct(r.reached / QUOTA_RPM),
      'vs one limiter': pct(r.reached / oneLimiter),
      'ok (200)': n(r.ok),
      '429 from upstream': n(r.rejected429),
      'shed locally (limit)': n(r.shedLimit),
      other: n(r.other),
    });
    printTable(
      `shared: ${GATEWAYS} gateway processes × ${RPS_PER_GATEWAY} req/s for ${SECONDS} s → fake upstream with a ${QUOTA_RPM} req/min quota; each guard limits to ${QUOTA_RPM}/min, 1 attempt`,
      [line('MemoryStore (per process)', memory), line('RedisStore (one prefix)', shared)],
    );
    console.log(
      `("of quota": requests that reached the upstream ÷ its ${QUOTA_RPM}/min quota; the run fits in one quota window. "vs one limiter": ÷ ${oneLimiter}, ` +
        `what one limiter of the quota admits in ${SECONDS} s (full bucket + refill). The provider's sliding 60 s window gives nothing back within the run, ` +
        `so the bucket's refill and the sync overshoot come back as 429s even when shared.)`,
    );
    for (const [name, r] of [
      ['memory', memory],
      ['redis', shared],
    ] as const) {
      if (r.other > 0)
        console.log(
          `shared: warning: ${r.other} requests in the ${name} run were neither 200, 429 nor shed by the limit`,
        );
      if (r.storeEvents > 0)
        console.log(`shared: warning: the ${name} run's stores reported ${r.storeEvents} availability events`);
    }
    printTable(
      'shared: guard.run of a resolved no-op (budget + throttle + breaker + one never-refusing limit), one process, best of 3 interleaved rounds',
      [
        { run: 'plain await of a no-op', 'ns/call': cost.plain, 'overhead ns': 0 },
        { run: 'guard.run, MemoryStore', 'ns/call': cost.memory, 'overhead ns': cost.memory - cost.plain },
        {
          run: 'guard.run, RedisStore (syncing every 100 ms)',
          'ns/call': cost.redis,
          'overhead ns': cost.redis - cost.plain,
        },
      ],
    );

    const row = (name: string, value: number, unit: string): Row => ({
      suite: 'shared',
      name,
      value: Number(value.toFixed(3)),
      unit,
    });
    const runRows = (tag: string, r: RunFigures): Row[] => [
      row(`shared-${tag}-upstream-requests`, r.reached, 'requests'),
      row(`shared-${tag}-upstream-rps`, r.reached / SECONDS, 'requests/s'),
      row(`shared-${tag}-upstream-vs-quota`, r.reached / QUOTA_RPM, 'ratio'),
      row(`shared-${tag}-upstream-429`, r.rejected429, 'requests'),
      row(`shared-${tag}-shed-limit`, r.shedLimit, 'requests'),
      row(`shared-${tag}-other`, r.other, 'requests'),
    ];
    return [
      ...runRows('memory', memory),
      ...runRows('redis', shared),
      row('shared-guard-run-plain-ns', cost.plain, 'ns/call'),
      row('shared-guard-run-memory-store-ns', cost.memory, 'ns/call'),
      row('shared-guard-run-redis-store-ns', cost.redis, 'ns/call'),
      row('shared-guard-run-redis-minus-memory-ns', cost.redis - cost.memory, 'ns/call'),
    ];
  } finally {
    await dropPrefix(redis, prefix);
    await redis.quit();
  }
}
