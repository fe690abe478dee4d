import { randomUUID } from 'node:crypto';
import type { ChainableCommander, Redis } from 'ioredis';
import type { Clock } from '../clock.js';
import { OptionError } from '../errors.js';
import { checkNonEmptyString, checkPositive } from '../options.js';
import type { StateStore } from '../store.js';
import type { BucketSpec, TokenBucketLike } from '../token-bucket.js';
import type { WindowCounterLike, WindowSpec } from '../window-counter.js';
import { BUCKET_SYNC, WINDOW_SYNC } from './redis-state-scripts.js';
import { SharedTokenBucket, type BucketDeltas } from './shared-token-bucket.js';
import { SharedWindowCounter, type BucketCounts, type WindowDeltas } from './shared-window-counter.js';

/** What a `RedisStore` says about its link to Redis. */
export type StoreEvent =
  /** A sync failed or timed out: from now on each process decides on local state alone. */
  | { type: 'store_unavailable'; at: number; error: string }
  /** A sync went through again after failures: shared state is back, local deltas were sent. */
  | { type: 'store_recovered'; at: number; downMs: number };

export interface RedisStoreOptions {
  /** An ioredis client; the store never closes it. */
  redis: Redis;
  /** The engine's clock. Must be epoch-based (like `systemClock`) so all processes share one timeline. */
  clock: Clock;
  /** Prefix of every key the store writes. @default 'stormlab' */
  prefix?: string;
  /** How often state syncs with Redis, ms; 0 = only when `sync()` is called. @default 100 */
  syncMs?: number;
  /** A sync that takes longer counts as failed (the store says it is unavailable). @default 1000 */
  timeoutMs?: number;
  /** A process that has not drawn on a shared bucket for this long no longer takes a share of it; at least 2 × syncMs. @default 2000 */
  activeMs?: number;
  /** This process's name among the sharers of a bucket. @default a random UUID */
  id?: string;
  onEvent?: (event: StoreEvent) => void;
}

interface Scripts {
  stormlabWindowSync(key: string, ...args: Array<string | number>): ChainableCommander;
  stormlabBucketSync(key: string, members: string, ...args: Array<string | number>): ChainableCommander;
}

interface Window {
  key: string;
  counter: SharedWindowCounter;
}

interface Bucket {
  key: string;
  bucket: SharedTokenBucket;
  spec: BucketSpec;
}

/**
 * Budget, throttle and breaker windows and token buckets shared through Redis by many
 * processes, behind the same `StateStore` interface as `MemoryStore`: pass it as a guard's or
 * limiter's `store` and nothing else changes. Decisions stay synchronous and local — the
 * hot path never waits for Redis — and every `syncMs` one pipelined round trip sends what this
 * process counted and spent and brings back what all processes did (one atomic Lua script per
 * window or bucket). Counts from other processes therefore arrive up to `syncMs` late.
 *
 * Buckets are split fairly: each process spends from its share (the shared level ÷ the
 * processes that drew on it in the last `activeMs`), so a burst across N processes stays near
 * the limit rather than N times it. Breaker state (open, half-open) stays per process; the
 * counts that trip it are shared.
 *
 * When Redis cannot be reached every process goes on with its local view (its own counts on
 * top of the last shared answer; its last share of each bucket, refilling), emits
 * `store_unavailable`, keeps what it has not sent, and sends it and resyncs when Redis
 * answers again (`store_recovered`). Call `close()` to stop syncing; the client stays open.
 */
export class RedisStore implements StateStore {
  readonly prefix: string;
  readonly id: string;
  private readonly redis: Redis & Scripts;
  private readonly clock: Clock;
  private readonly syncMs: number;
  private readonly timeoutMs: number;
  private readonly activeMs: number;
  private listeners: Array<(e: StoreEvent) => void> = [];
  private readonly windows = new Map<string, Window>();
  private readonly buckets = new Map<string, Bucket>();
  private inFlight: Promise<void> | undefined;
  /** When a sync last failed or timed out (-Infinity: never): a bucket synced before it may have been lost since. */
  private failedAt = -Infinity;
  private downSince: number | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private closed = false;

  constructor(options: RedisStoreOptions) {
    if (options?.redis === undefined || typeof options.redis.pipeline !== 'function')
      throw new OptionError('redisStore.redis must be an ioredis client');
    if (typeof options.clock?.now !== 'function') throw new OptionError('redisStore.clock must be a Clock');
    this.prefix = checkNonEmptyString('redisStore.prefix', options.prefix ?? 'stormlab');
    this.id = checkNonEmptyString('redisStore.id', options.id ?? randomUUID());
    this.syncMs = options.syncMs ?? 100;
    if (this.syncMs !== 0) checkPositive('redisStore.syncMs', this.syncMs);
    this.timeoutMs = checkPositive('redisStore.timeoutMs', options.timeoutMs ?? 1000);
    this.activeMs = checkPositive('redisStore.activeMs', options.activeMs ?? 2000);
    // A sharer is forgotten after activeMs without a sync that marks it: with syncs further
    // apart than that, busy processes would drop out of each other's count between syncs.
    if (this.activeMs < 2 * this.syncMs)
      throw new OptionError(
        `redisStore.activeMs must be at least twice redisStore.syncMs (${this.syncMs}), got ${this.activeMs}`,
      );
    this.clock = options.clock;
    if (options.onEvent) this.subscribe(options.onEvent);
    const redis = options.redis as Redis & Partial<Scripts>;
    if (redis.stormlabWindowSync === undefined)
      redis.defineCommand('stormlabWindowSync', { numberOfKeys: 1, lua: WINDOW_SYNC });
    if (redis.stormlabBucketSync === undefined)
      redis.defineCommand('stormlabBucketSync', { numberOfKeys: 2, lua: BUCKET_SYNC });
    this.redis = redis as Redis & Scripts;
    if (this.syncMs > 0) {
      // A background chore: it must not keep a process alive that has nothing else to do.
      this.timer = setInterval(() => void this.sync(), this.syncMs);
      this.timer.unref();
    }
  }

  /** False while Redis is unreachable (decisions then use local state). */
  get available(): boolean {
    return this.downSince === undefined;
  }

  /** Adds a listener for `StoreEvent`s; returns a function that removes it. */
  subscribe(listener: (event: StoreEvent) => void): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  windowCounter(key: string, spec: WindowSpec): WindowCounterLike {
    const id = `${this.prefix}:w:${key}:${spec.windowMs}/${spec.buckets}/${spec.fields}`;
    const found = this.windows.get(key);
    if (found) {
      if (found.key !== id)
        throw new OptionError(`store key ${JSON.stringify(key)} is already used with other settings`);
      return found.counter;
    }
    const counter = new SharedWindowCounter(spec, key);
    this.windows.set(key, { key: id, counter });
    return counter;
  }

  tokenBucket(key: string, spec: BucketSpec): TokenBucketLike {
    const id = `${this.prefix}:b:${key}:${spec.capacity}/${spec.refillPerSec}`;
    const found = this.buckets.get(key);
    if (found) {
      if (found.key !== id || found.spec.initial !== spec.initial)
        throw new OptionError(`store key ${JSON.stringify(key)} is already used with other settings`);
      return found.bucket;
    }
    const bucket = new SharedTokenBucket(spec, key);
    this.buckets.set(key, { key: id, bucket, spec: { ...spec } });
    return bucket;
  }

  /**
   * Sends what this process counted and spent and takes in what every process did, in one
   * pipelined round trip. Never rejects: a failure marks the store unavailable and keeps the
   * deltas for the next sync. A sync already on its way is joined, not doubled.
   */
  sync(): Promise<void> {
    if (this.closed) return Promise.resolve();
    // syncOnce handles Redis failing; this catch is for anything else, so that a timer's sync
    // can never become an unhandled rejection in the user's process.
    this.inFlight ??= this.syncOnce()
      .catch((err: unknown) => this.markDown(err))
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }

  /**
   * Stops the background sync after one last one (so this process's counts are not lost),
   * waiting for it at most `timeoutMs`: with Redis gone the client may hold the last sync's
   * commands for many seconds of reconnects, and what it has not sent by then is dropped.
   */
  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    let cancel: (() => void) | undefined;
    const late = new Promise<void>((resolve) => {
      cancel = this.clock.setTimer(this.timeoutMs, resolve);
    });
    await Promise.race([this.sync(), late]);
    cancel?.();
    this.closed = true;
  }

  private async syncOnce(): Promise<void> {
    const now = this.clock.now();
    const windows = [...this.windows.values()];
    const buckets = [...this.buckets.values()].filter((b) => b.bucket.needsSync(now, this.activeMs));
    if (windows.length === 0 && buckets.length === 0) return;
    const wDeltas: WindowDeltas[] = windows.map((w) => w.counter.takeDeltas(now));
    const bDeltas: BucketDeltas[] = buckets.map((b) => b.bucket.takeDeltas());
    const p = this.redis.pipeline() as ChainableCommander & Scripts;
    windows.forEach((w, i) => {
      const d = wDeltas[i];
      const args: Array<string | number> = [d.minId, Math.ceil(w.counter.spec.windowMs * 2)];
      for (let j = 0; j < d.ids.length; j++) args.push(d.ids[j], d.fields[j], d.values[j]);
      p.stormlabWindowSync(w.key, ...args);
    });
    buckets.forEach((b, i) => {
      const s = b.spec;
      const ratePerMs = s.refillPerSec / 1000;
      const ttl = Math.ceil(
        Math.min(86_400_000, Math.max(60_000, ratePerMs > 0 ? (2 * s.capacity) / ratePerMs : Infinity)),
      );
      p.stormlabBucketSync(
        b.key,
        `${b.key}:sharers`,
        now,
        s.capacity,
        ratePerMs,
        s.initial ?? s.capacity,
        bDeltas[i].spent,
        bDeltas[i].refunded,
        this.id,
        this.activeMs,
        ttl,
        bDeltas[i].join ? 1 : 0,
        Number.isFinite(bDeltas[i].since) ? bDeltas[i].since : now,
        lostSince(b.bucket.lastSyncAt, this.failedAt, now, ttl),
      );
    });
    // A slow answer marks the store unavailable at once, but the sync stays on its way: if it
    // lands late it is applied, if it fails its deltas are sent again — never both.
    const cancelSlow = this.clock.setTimer(this.timeoutMs, () =>
      this.markDown(new Error(`Redis did not answer within ${this.timeoutMs} ms`)),
    );
    let replies: Array<[Error | null, unknown]>;
    try {
      replies = (await p.exec()) ?? [];
      const failed = replies.find(([err]) => err !== null);
      if (failed) throw failed[0];
      if (replies.length !== windows.length + buckets.length)
        throw new Error(`expected ${windows.length + buckets.length} replies, got ${replies.length}`);
    } catch (err) {
      windows.forEach((w, i) => w.counter.requeue(wDeltas[i]));
      buckets.forEach((b, i) => b.bucket.requeue(bDeltas[i]));
      this.markDown(err);
      return;
    } finally {
      cancelSlow();
    }
    const at = this.clock.now();
    windows.forEach((w, i) =>
      w.counter.applyRemote(parseWindow(replies[i][1], w.counter.spec.fields), at, at + this.syncMs),
    );
    buckets.forEach((b, i) => {
      const [t, o, n, r] = replies[windows.length + i][1] as string[];
      b.bucket.applyRemote(
        { tokens: Number(t), debt: Number(o), sharers: Number(n), rejoined: r === '1' },
        at,
        this.activeMs,
      );
    });
    this.markUp(at);
  }

  private emit(event: StoreEvent): void {
    for (const l of this.listeners) l(event);
  }

  private markDown(err: unknown): void {
    this.failedAt = this.clock.now();
    if (this.downSince !== undefined) return;
    this.downSince = this.clock.now();
    this.emit({
      type: 'store_unavailable',
      at: this.downSince,
      error: err instanceof Error ? err.message : String(err),
    });
  }

  private markUp(at: number): void {
    if (this.downSince === undefined) return;
    const downMs = at - this.downSince;
    this.downSince = undefined;
    this.emit({ type: 'store_recovered', at, downMs });
  }
}

/**
 * The bucket script's `lastSync`: when this process last synced the bucket, if Redis missing
 * it now would mean it was lost (a sync failed since, or the key cannot have expired yet),
 * else -1 (never synced, or idle past the key's TTL: a missing bucket is then a new one, full).
 */
function lostSince(lastSyncAt: number, failedAt: number, now: number, ttlMs: number): number {
  if (!Number.isFinite(lastSyncAt)) return -1;
  return failedAt >= lastSyncAt || now - lastSyncAt < ttlMs ? lastSyncAt : -1;
}

/** The window script's flat answer (`id:field`, value, ...) as counts per bucket id. */
function parseWindow(reply: unknown, fields: number): BucketCounts {
  const out: BucketCounts = new Map();
  const flat = reply as string[];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const colon = flat[i].indexOf(':');
    const id = Number(flat[i].slice(0, colon));
    const field = Number(flat[i].slice(colon + 1));
    if (!(field >= 0 && field < fields)) continue;
    let counts = out.get(id);
    if (counts === undefined) out.set(id, (counts = new Float64Array(fields)));
    counts[field] = Number(flat[i + 1]);
  }
  return out;
}
