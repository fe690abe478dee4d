import { IdempotencyTable, type IdempotencyTableOptions } from './idempotency-table.js';

/**
 * - `in_progress`: an owner is doing the side effect under a lease.
 * - `succeeded`: done; the receipt says what came of it (an id, a summary).
 * - `failed`: the last attempt failed; `retryable` says whether the key may be taken again.
 */
export type IdempotencyStatus = 'in_progress' | 'succeeded' | 'failed';

export interface IdempotencyRecord {
  key: string;
  status: IdempotencyStatus;
  /** Who holds (or last held) the key. */
  owner: string;
  /** How many times the key has been acquired (1 on the first begin). */
  attempts: number;
  createdAt: number;
  updatedAt: number;
  /** When the owner's lease runs out; only meaningful while `in_progress`, 0 otherwise. */
  leaseUntil: number;
  /** What `succeed` stored: JSON-serialisable, returned as a fresh copy every time. */
  receipt?: unknown;
  error?: string;
  retryable?: boolean;
  /** When the store forgets the record (the key can then be done again). */
  expiresAt: number;
}

export type BeginResult =
  /** You own the key: do the side effect now, then call `succeed` or `fail`. */
  | { outcome: 'acquired'; record: IdempotencyRecord }
  /** Someone else holds a live lease on it. */
  | { outcome: 'in_progress'; record: IdempotencyRecord }
  /** It was done before: `record.receipt` says what came of it. */
  | { outcome: 'succeeded'; record: IdempotencyRecord }
  /** It failed for good (the failure was not retryable). */
  | { outcome: 'failed'; record: IdempotencyRecord };

/**
 * Remembers which side effects were done. Async so that a shared store (Redis, where each
 * method is one atomic Lua script) drops in behind the same calls. Every method is atomic
 * per key: between reading a record and writing it, no other call sees it half-changed.
 */
export interface IdempotencyStore {
  /**
   * Takes the key, writing `in_progress` BEFORE the caller's side effect: if the caller only
   * recorded success afterwards, a timeout retry racing the first attempt would do it twice.
   * Acquires when there is no live record, when the holder's lease has run out (a crashed
   * worker's key is retaken), or when the last failure was retryable.
   */
  begin(key: string, owner: string, leaseMs: number, now: number): Promise<BeginResult>;
  /** Records the receipt; false (and nothing changes) if `owner` no longer holds the key. */
  succeed(key: string, owner: string, receipt: unknown, now: number): Promise<boolean>;
  /** Records a failure; false (and nothing changes) if `owner` no longer holds the key. */
  fail(key: string, owner: string, failure: { error: string; retryable: boolean }, now: number): Promise<boolean>;
  /** Extends the owner's lease to `now + leaseMs`; false if `owner` no longer holds the key. */
  renew(key: string, owner: string, leaseMs: number, now: number): Promise<boolean>;
  get(key: string, now: number): Promise<IdempotencyRecord | undefined>;
}

/** Options of the memory store: its table's. */
export type MemoryIdempotencyStoreOptions = IdempotencyTableOptions;

/**
 * Records in a Map in this process, behind the async interface: the state machine is
 * `IdempotencyTable`'s, synchronous, which the simulator drives directly on its virtual clock.
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly table: IdempotencyTable;

  constructor(options: MemoryIdempotencyStoreOptions = {}) {
    this.table = new IdempotencyTable(options);
  }

  /** How long records are kept after their last write. */
  get ttlMs(): number {
    return this.table.ttlMs;
  }

  /** Records held, expired ones not yet swept included. */
  get size(): number {
    return this.table.size;
  }

  async begin(key: string, owner: string, leaseMs: number, now: number): Promise<BeginResult> {
    return this.table.begin(key, owner, leaseMs, now);
  }

  async succeed(key: string, owner: string, receipt: unknown, now: number): Promise<boolean> {
    return this.table.succeed(key, owner, receipt, now);
  }

  async fail(
    key: string,
    owner: string,
    failure: { error: string; retryable: boolean },
    now: number,
  ): Promise<boolean> {
    return this.table.fail(key, owner, failure, now);
  }

  async renew(key: string, owner: string, leaseMs: number, now: number): Promise<boolean> {
    return this.table.renew(key, owner, leaseMs, now);
  }

  async get(key: string, now: number): Promise<IdempotencyRecord | undefined> {
    return this.table.get(key, now);
  }
}
