import type { Redis } from 'ioredis';
import { OptionError } from '../errors.js';
import type { BeginResult, IdempotencyRecord, IdempotencyStatus, IdempotencyStore } from '../idempotency-store.js';
import { checkNonEmptyString, checkPositive } from '../options.js';
import { BEGIN, FAIL, GET, RENEW, SUCCEED } from './idempotency-scripts.js';
import { StoreUnavailableError } from './store-unavailable-error.js';

export interface RedisIdempotencyStoreOptions {
  /** An ioredis client; the store never closes it. */
  redis: Redis;
  /** Prefix of every key the store writes: a record lives at `${prefix}:idem:${key}`. @default 'stormlab' */
  prefix?: string;
  /** Records are forgotten this long after their last write (never while a lease is live). @default 86_400_000 */
  ttlMs?: number;
}

type Reply = Promise<unknown>;

/** The scripts, defined on the client once (ioredis runs them by EVALSHA, loading them on NOSCRIPT). */
interface Scripts {
  stormlabIdemBegin(hash: string, key: string, owner: string, now: string, leaseUntil: string, ttlUntil: string): Reply;
  stormlabIdemSucceed(
    hash: string,
    owner: string,
    now: string,
    ttlUntil: string,
    hasReceipt: '1' | '0',
    receiptJson: string,
  ): Reply;
  stormlabIdemFail(
    hash: string,
    owner: string,
    now: string,
    ttlUntil: string,
    error: string,
    retryable: '1' | '0',
  ): Reply;
  stormlabIdemRenew(hash: string, owner: string, now: string, ttlUntil: string, leaseUntil: string): Reply;
  stormlabIdemGet(hash: string, now: string): Reply;
}

const SCRIPTS: ReadonlyArray<[keyof Scripts, string, boolean]> = [
  ['stormlabIdemBegin', BEGIN, false],
  ['stormlabIdemSucceed', SUCCEED, false],
  ['stormlabIdemFail', FAIL, false],
  ['stormlabIdemRenew', RENEW, false],
  ['stormlabIdemGet', GET, true],
];

/**
 * `IdempotencyStore` in Redis, shared by every process that uses the same client settings
 * and prefix. Behaves exactly as `MemoryIdempotencyStore` (same outcomes, same records, same
 * errors): each method is one atomic Lua script, so two processes racing on a key see one
 * winner, and `now` is always the caller's clock, never Redis's.
 *
 * It fails closed: when Redis cannot answer, every method rejects with a
 * `StoreUnavailableError` rather than guess, because a key wrongly reported free means a
 * side effect done twice. The client belongs to the caller: the store never connects,
 * configures or closes it beyond defining its scripts on it. Set ioredis's `commandTimeout`
 * if a hung Redis should fail calls rather than stall them.
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  readonly prefix: string;
  readonly ttlMs: number;
  private readonly redis: Redis & Scripts;
  private readonly name: string;

  constructor(options: RedisIdempotencyStoreOptions) {
    const redis = options?.redis;
    if (typeof (redis as Partial<Redis> | undefined)?.defineCommand !== 'function') {
      throw new OptionError('idempotencyStore.redis must be an ioredis client');
    }
    this.prefix = checkNonEmptyString('idempotencyStore.prefix', options.prefix ?? 'stormlab');
    this.ttlMs = checkPositive('idempotencyStore.ttlMs', options.ttlMs ?? 86_400_000);
    this.name = `RedisIdempotencyStore (prefix ${JSON.stringify(this.prefix)})`;
    const client = redis as Redis & Partial<Scripts>;
    for (const [name, lua, readOnly] of SCRIPTS) {
      if (client[name] === undefined) client.defineCommand(name, { numberOfKeys: 1, lua, readOnly });
    }
    this.redis = client as Redis & Scripts;
  }

  async begin(key: string, owner: string, leaseMs: number, now: number): Promise<BeginResult> {
    checkArgs(key, owner);
    checkPositive('idempotencyStore.leaseMs', leaseMs);
    const reply = await this.call(`begin key ${JSON.stringify(key)}`, () =>
      this.redis.stormlabIdemBegin(
        this.hashOf(key),
        key,
        owner,
        String(now),
        String(now + leaseMs),
        String(now + this.ttlMs),
      ),
    );
    const [outcome, fields] = reply as [BeginResult['outcome'], string[]];
    return { outcome, record: toRecord(fields) } as BeginResult;
  }

  async succeed(key: string, owner: string, receipt: unknown, now: number): Promise<boolean> {
    checkArgs(key, owner);
    let json: string | undefined;
    try {
      json = JSON.stringify(receipt);
    } catch (err) {
      // As in memory: an owner that no longer holds the key just hears `false`.
      if (!(await this.holds(key, owner, now))) return false;
      throw new OptionError(
        `receipt for idempotency key ${JSON.stringify(key)} must be JSON-serialisable: ${(err as Error).message}`,
      );
    }
    const done = await this.call(`record success for key ${JSON.stringify(key)}`, () =>
      this.redis.stormlabIdemSucceed(
        this.hashOf(key),
        owner,
        String(now),
        String(now + this.ttlMs),
        json === undefined ? '0' : '1',
        json ?? '',
      ),
    );
    return done === 1;
  }

  async fail(
    key: string,
    owner: string,
    failure: { error: string; retryable: boolean },
    now: number,
  ): Promise<boolean> {
    checkArgs(key, owner);
    const done = await this.call(`record failure for key ${JSON.stringify(key)}`, () =>
      this.redis.stormlabIdemFail(
        this.hashOf(key),
        owner,
        String(now),
        String(now + this.ttlMs),
        String(failure.error),
        failure.retryable === true ? '1' : '0',
      ),
    );
    return done === 1;
  }

  async renew(key: string, owner: string, leaseMs: number, now: number): Promise<boolean> {
    checkArgs(key, owner);
    checkPositive('idempotencyStore.leaseMs', leaseMs);
    const done = await this.call(`renew key ${JSON.stringify(key)}`, () =>
      this.redis.stormlabIdemRenew(
        this.hashOf(key),
        owner,
        String(now),
        String(now + this.ttlMs),
        String(now + leaseMs),
      ),
    );
    return done === 1;
  }

  async get(key: string, now: number): Promise<IdempotencyRecord | undefined> {
    const fields = await this.call(`read key ${JSON.stringify(key)}`, () =>
      this.redis.stormlabIdemGet(this.hashOf(key), String(now)),
    );
    return fields == null ? undefined : toRecord(fields as string[]);
  }

  private hashOf(key: string): string {
    return `${this.prefix}:idem:${key}`;
  }

  private async holds(key: string, owner: string, now: number): Promise<boolean> {
    const found = await this.get(key, now);
    return found !== undefined && found.status === 'in_progress' && found.owner === owner;
  }

  /** Runs one script; any failure of the client or of Redis becomes a `StoreUnavailableError`. */
  private async call(operation: string, run: () => Reply): Reply {
    try {
      return await run();
    } catch (err) {
      throw new StoreUnavailableError(this.name, operation, err);
    }
  }
}

/** A record from the hash's flat field/value list; numbers come back from their stored text. */
function toRecord(flat: string[]): IdempotencyRecord {
  const f = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) f.set(flat[i], flat[i + 1]);
  const record: IdempotencyRecord = {
    key: f.get('key') ?? '',
    status: f.get('status') as IdempotencyStatus,
    owner: f.get('owner') ?? '',
    attempts: Number(f.get('attempts')),
    createdAt: Number(f.get('createdAt')),
    updatedAt: Number(f.get('updatedAt')),
    leaseUntil: Number(f.get('leaseUntil')),
    expiresAt: Number(f.get('expiresAt')),
  };
  const receipt = f.get('receipt');
  if (receipt !== undefined) record.receipt = JSON.parse(receipt);
  const error = f.get('error');
  if (error !== undefined) record.error = error;
  const retryable = f.get('retryable');
  if (retryable !== undefined) record.retryable = retryable === '1';
  return record;
}

function checkArgs(key: string, owner: string): void {
  checkNonEmptyString('idempotency key', key);
  checkNonEmptyString('idempotency owner', owner);
}
