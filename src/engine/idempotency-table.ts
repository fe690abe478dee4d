import { OptionError } from './errors.js';
import type { BeginResult, IdempotencyRecord } from './idempotency-store.js';
import { checkNonEmptyString, checkPositive, withDefaults } from './options.js';

export interface IdempotencyTableOptions {
  /** Records are forgotten this long after their last write (never while a lease is live). @default 86_400_000 */
  ttlMs?: number;
}

const DEFAULTS: Required<IdempotencyTableOptions> = { ttlMs: 86_400_000 };

/** How many expired records one write may sweep, so no single call pays for a backlog. */
const SWEEP_PER_WRITE = 8;

/** The stored form: the receipt is kept as JSON text, as Redis would keep it. */
type Stored = Omit<IdempotencyRecord, 'receipt'> & { receiptJson: string | undefined };

/**
 * The idempotency state machine, synchronous, with records in a Map in this process: what
 * `MemoryIdempotencyStore` serves behind the async store interface, and what a discrete-event
 * simulation drives directly (it cannot wait for promises between two events). The receipt is
 * stored as JSON text and parsed on the way out, so callers get copies they cannot use to
 * change the table, and a receipt behaves here exactly as it will in Redis (a `Date` comes back
 * as a string, in both).
 *
 * Memory stays flat: every write re-inserts its record, so Map order is last-write order, and
 * each write sweeps a few expired records from the front.
 */
export class IdempotencyTable {
  readonly ttlMs: number;
  private readonly records = new Map<string, Stored>();

  constructor(options: IdempotencyTableOptions = {}) {
    const o = withDefaults(DEFAULTS, options);
    this.ttlMs = checkPositive('idempotencyStore.ttlMs', o.ttlMs);
  }

  /** Records held, expired ones not yet swept included. */
  get size(): number {
    return this.records.size;
  }

  begin(key: string, owner: string, leaseMs: number, now: number): BeginResult {
    checkArgs(key, owner);
    checkPositive('idempotencyStore.leaseMs', leaseMs);
    const found = this.live(key, now);
    if (!found) return { outcome: 'acquired', record: this.write(fresh(key, owner, leaseMs, now), now) };
    if (found.status === 'succeeded') return { outcome: 'succeeded', record: toRecord(found) };
    if (found.status === 'in_progress' && now < found.leaseUntil)
      return { outcome: 'in_progress', record: toRecord(found) };
    if (found.status === 'failed' && !found.retryable) return { outcome: 'failed', record: toRecord(found) };
    // A lease that ran out (its holder crashed or stalled) or a retryable failure: take it over.
    const retaken: Stored = {
      ...found,
      status: 'in_progress',
      owner,
      attempts: found.attempts + 1,
      updatedAt: now,
      leaseUntil: now + leaseMs,
    };
    delete retaken.error;
    delete retaken.retryable;
    return { outcome: 'acquired', record: this.write(retaken, now) };
  }

  succeed(key: string, owner: string, receipt: unknown, now: number): boolean {
    checkArgs(key, owner);
    const held = this.held(key, owner, now);
    if (!held) return false;
    this.write(
      { ...held, status: 'succeeded', updatedAt: now, leaseUntil: 0, receiptJson: serialise(key, receipt) },
      now,
    );
    return true;
  }

  fail(key: string, owner: string, failure: { error: string; retryable: boolean }, now: number): boolean {
    checkArgs(key, owner);
    const held = this.held(key, owner, now);
    if (!held) return false;
    this.write(
      {
        ...held,
        status: 'failed',
        updatedAt: now,
        leaseUntil: 0,
        error: String(failure.error),
        retryable: failure.retryable === true,
      },
      now,
    );
    return true;
  }

  renew(key: string, owner: string, leaseMs: number, now: number): boolean {
    checkArgs(key, owner);
    checkPositive('idempotencyStore.leaseMs', leaseMs);
    const held = this.held(key, owner, now);
    if (!held) return false;
    this.write({ ...held, updatedAt: now, leaseUntil: Math.max(held.leaseUntil, now + leaseMs) }, now);
    return true;
  }

  get(key: string, now: number): IdempotencyRecord | undefined {
    const found = this.live(key, now);
    return found && toRecord(found);
  }

  /**
   * The record if `owner` still holds it. A lease that ran out but was not retaken still
   * counts: the side effect is done, and recording it is what stops a second one.
   */
  private held(key: string, owner: string, now: number): Stored | undefined {
    const found = this.live(key, now);
    return found && found.status === 'in_progress' && found.owner === owner ? found : undefined;
  }

  private live(key: string, now: number): Stored | undefined {
    const found = this.records.get(key);
    if (found && now >= found.expiresAt) {
      this.records.delete(key);
      return undefined;
    }
    return found;
  }

  /** Stores `next` (expiry pushed past any live lease) and returns a caller's copy. */
  private write(next: Stored, now: number): IdempotencyRecord {
    next.expiresAt = Math.max(now + this.ttlMs, next.leaseUntil);
    this.records.delete(next.key);
    this.records.set(next.key, next);
    this.sweep(now);
    return toRecord(next);
  }

  private sweep(now: number): void {
    let budget = SWEEP_PER_WRITE;
    for (const [key, record] of this.records) {
      if (budget-- === 0 || now < record.expiresAt) return;
      this.records.delete(key);
    }
  }
}

function fresh(key: string, owner: string, leaseMs: number, now: number): Stored {
  return {
    key,
    status: 'in_progress',
    owner,
    attempts: 1,
    createdAt: now,
    updatedAt: now,
    leaseUntil: now + leaseMs,
    expiresAt: 0,
    receiptJson: undefined,
  };
}

function toRecord(stored: Stored): IdempotencyRecord {
  const { receiptJson, ...rest } = stored;
  return receiptJson === undefined ? rest : { ...rest, receipt: JSON.parse(receiptJson) };
}

function serialise(key: string, receipt: unknown): string | undefined {
  try {
    return JSON.stringify(receipt);
  } catch (err) {
    throw new OptionError(
      `receipt for idempotency key ${JSON.stringify(key)} must be JSON-serialisable: ${(err as Error).message}`,
      'receipt',
    );
  }
}

function checkArgs(key: string, owner: string): void {
  checkNonEmptyString('idempotency key', key);
  checkNonEmptyString('idempotency owner', owner);
}
