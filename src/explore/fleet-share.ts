import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { RedisIdempotencyStore } from '../engine/stores/redis-idempotency-store.js';
import { RedisStore } from '../engine/stores/redis-store.js';
import { preciseClock } from '../platform/system-clock.js';
import { LiveRun } from '../run/live/live-run.js';
import { runSpecOf } from '../run/run-spec.js';
import { resolveScenario } from '../scenario/resolve-scenario.js';
import type { Scenario } from '../scenario/scenario.js';
import type { EngineStores } from '../traffic/engine-replicas.js';
import { clockOffset } from './fleet-clock.js';
import {
  FLEET_DEFAULTS,
  FLEET_KEY_TTL_S,
  type FleetTimings,
  fleetKeys,
  type LiveShareJob,
  type ShareReady,
  type ShareReport,
  type ShareSkipped,
} from './fleet-protocol.js';

/** How a worker drives a share: its Redis (for the run's control and the shared engine state), its name, where its reports go. */
export interface ShareDriver {
  redis: Redis;
  worker: string;
  /** Each report while it drives (BullMQ progress); the final one is the return value. */
  progress(report: ShareReport): Promise<void>;
  /** Aborted when the worker itself is stopped (Ctrl-C, SIGTERM): the share stops as a coordinator's stop would stop it. */
  stop: AbortSignal;
  /** Timings, for tests. @default FLEET_DEFAULTS */
  timings?: Partial<FleetTimings>;
}

/** The scenario of a share, resolved from its text as a file of its own (the effective document: nothing is applied on top). */
function shareScenario(job: LiveShareJob): Scenario {
  const dir = mkdtempSync(join(tmpdir(), 'stormlab-share-'));
  try {
    writeFileSync(join(dir, job.scenario.file), job.scenario.text);
    return resolveScenario({ arg: job.scenario.file, cwd: dir }).runs[0].scenario;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The agreed start (Redis ms) once the coordinator sets it, or why there will be none: the run
 * was stopped (by the coordinator, or this worker), or the coordinator's `alive` key lapsed.
 * There is no countdown of its own: the coordinator's wait for workers (`--fleet-wait`) and
 * its preparations (hop 2's faults) take what they take, while it is there.
 */
async function awaitStart(
  redis: Redis,
  keys: ReturnType<typeof fleetKeys>,
  stop: AbortSignal,
  pollMs: number,
): Promise<number | string> {
  for (;;) {
    const [[, control], [, alive]] = (await redis
      .multi()
      .hmget(keys.control, 'start', 'stop')
      .exists(keys.alive)
      .exec()) as [[unknown, Array<string | null>], [unknown, number]];
    const [start, stopped] = control;
    if (stopped !== null || stop.aborted) return 'stopped before the start';
    if (start !== null) return Number(start);
    if (alive === 0) return 'no start came: the coordinator went away';
    await sleep(pollMs);
  }
}

/**
 * One worker's part of a live run on a fleet: claims the share (a share is driven once, even
 * if BullMQ hands its job out again), says it is ready with its clock's offset against Redis's,
 * waits for the agreed start (Redis time, set by the coordinator), drives its roots at their
 * intended times against the run's target, sends its counters once a second, and gives its
 * last counters back when its roots are done, when the coordinator says stop, or when the
 * worker is stopped. With `sharedState` the engines keep their windows and buckets in Redis
 * (`RedisStore`, keys of this run and variant), one for the whole fleet.
 */
export async function driveShare(job: LiveShareJob, d: ShareDriver): Promise<ShareReport | ShareSkipped> {
  const t = { ...FLEET_DEFAULTS, ...d.timings };
  const keys = fleetKeys(job.run);
  const { redis } = d;
  const claimed = await redis.hsetnx(keys.claims, String(job.share), d.worker);
  await redis.expire(keys.claims, FLEET_KEY_TTL_S);
  if (claimed === 0) return { run: job.run, share: job.share, skipped: 'another worker holds this share' };
  const scenario = shareScenario(job);
  const spec = runSpecOf(scenario, job.name);
  const stores: RedisStore[] = [];
  let storeUnavailable = 0;
  const engineStores: EngineStores | undefined = job.sharedState
    ? (guard, replica) => {
        const store = new RedisStore({
          redis,
          clock: { now: () => live.scheduler.now(), setTimer: preciseClock.setTimer },
          prefix: `stormlab:fleet:${job.run}:engine:${guard}:${replica}`,
          id: `${d.worker}:${job.share}`,
          onEvent: (e) => {
            if (e.type === 'store_unavailable') storeUnavailable++;
          },
        });
        stores.push(store);
        return store;
      }
    : undefined;
  const live: LiveRun = new LiveRun(spec, {
    connections: job.connections,
    headers: job.headers,
    api: scenario.live.api,
    stream: scenario.live.stream,
    share: { index: job.share, of: job.of },
    ...(engineStores === undefined ? {} : { engineStores }),
  });
  const { offsetMs, rttMs } = await clockOffset(redis);
  const ready: ShareReady = { worker: d.worker, offsetMs, rttMs };
  await redis.hset(keys.ready, String(job.share), JSON.stringify(ready));
  await redis.expire(keys.ready, FLEET_KEY_TTL_S);
  let startLagMs = 0;
  let origin = 0;
  const report = (final: boolean): ShareReport => ({
    run: job.run,
    share: job.share,
    worker: d.worker,
    t: live.now,
    state: live.metrics.state(),
    upstream: live.transport.upstreamStats(),
    sent: live.sent(),
    final,
    offsetMs,
    startLagMs,
    ...(final
      ? {
          live: live.transport.figures(),
          errorCodes: Object.fromEntries(live.transport.errorCodes),
          interrupted: live.interrupted,
          storeUnavailable,
        }
      : {}),
  });
  try {
    // The agreed instant, in Redis's time: ours is that less our offset.
    const start = await awaitStart(redis, keys, d.stop, t.pollMs);
    if (typeof start === 'string') {
      // Not ready any more: the coordinator must not count this worker for a share it gave up.
      await redis.hdel(keys.ready, String(job.share));
      return { run: job.run, share: job.share, skipped: start };
    }
    origin = start - offsetMs;
    const ahead = origin - preciseClock.now();
    if (ahead > 0) await sleep(ahead);
    startLagMs = Math.max(0, Math.round(preciseClock.now() - origin));
    const url = job.target;
    let idempotency: RedisIdempotencyStore | undefined;
    if (scenario.idempotency === 'redis')
      idempotency = new RedisIdempotencyStore({
        redis,
        prefix: `stormlab:idem:${scenario.name}:${job.run}:${job.name}`,
      });
    const running = live.start(
      { url, ...(idempotency === undefined ? {} : { idempotencyStore: idempotency }) },
      origin,
    );
    const stopOnAbort = (): void => live.stop();
    d.stop.addEventListener('abort', stopOnAbort);
    let beat = preciseClock.now();
    while (!live.done) {
      await Promise.race([running.catch(() => {}), sleep(t.pollMs)]);
      if (live.done) break;
      if ((await redis.hget(keys.control, 'stop')) !== null) live.stop();
      if (preciseClock.now() - beat >= t.heartbeatMs) {
        beat = preciseClock.now();
        await d.progress(report(false));
      }
    }
    d.stop.removeEventListener('abort', stopOnAbort);
    await running;
    return report(true);
  } finally {
    await live.close();
    await Promise.allSettled(stores.map((s) => s.close()));
  }
}
