import type { Clock } from './clock.js';
import { StormlabError } from './errors.js';
import type { IdempotencyRecord, IdempotencyStore } from './idempotency-store.js';
import { checkNonEmptyString, checkNumber, checkPositive } from './options.js';
import type { Random } from './random.js';

/**
 * - `executed`: this call did the side effect. `leaseLost` is set when its lease ran out and
 *   another owner took the key while it ran: the side effect may then have happened twice,
 *   and the receipt was not recorded.
 * - `replayed`: it was done before; `value` is the stored receipt and `fn` was not called.
 */
export type IdempotentResult<T> = { status: 'executed'; value: T; leaseLost?: true } | { status: 'replayed'; value: T };

/** Another owner holds a live lease on the key: try again after `retryAfterMs`. */
export class IdempotencyInProgressError extends StormlabError {
  readonly record: IdempotencyRecord;
  readonly retryAfterMs: number;
  constructor(record: IdempotencyRecord, now: number) {
    const wait = Math.max(0, record.leaseUntil - now);
    super(
      'ERR_IDEMPOTENCY_IN_PROGRESS',
      `idempotency key ${JSON.stringify(record.key)} is in progress (attempt ${record.attempts}, lease ends in ${Math.ceil(wait)} ms)`,
    );
    this.record = record;
    this.retryAfterMs = wait;
  }
}

/** The key's last attempt failed with a non-retryable error: doing it again will not help. */
export class IdempotencyFailedError extends StormlabError {
  readonly record: IdempotencyRecord;
  constructor(record: IdempotencyRecord) {
    super(
      'ERR_IDEMPOTENCY_FAILED',
      `idempotency key ${JSON.stringify(record.key)} failed for good after ${record.attempts} attempt(s): ${record.error ?? 'unknown error'}`,
    );
    this.record = record;
  }
}

export interface WithIdempotencyArgs {
  store: IdempotencyStore;
  /** From `idempotencyKey(...)`: bound to the business intent, not to the request. */
  key: string;
  clock: Clock;
  /** Draws the owner id (no `Math.random` in the engine). */
  random: Random;
  /** How long the key stays ours without renewal; a crashed worker's key is retaken after it. @default 60_000 */
  leaseMs?: number;
  /** Renew the lease this often while `fn` runs (on `clock`); 0 never renews. @default leaseMs / 3 */
  renewEveryMs?: number;
  /** Whether a failure of `fn` lets the key be taken again. @default () => true */
  isRetryable?: (err: unknown) => boolean;
}

const DEFAULT_LEASE_MS = 60_000;
const OWNER_CHARS = 12;

/**
 * Runs `fn` (the side effect) at most once per key while the store remembers it:
 * `in_progress` is written before `fn` starts, the return value is stored as the receipt
 * when it succeeds, and a duplicate gets the receipt back instead of a second side effect.
 * The store's receipt is what a replay returns, so `fn`'s value should be JSON-serialisable.
 */
export async function withIdempotency<T>(
  args: WithIdempotencyArgs,
  fn: () => Promise<T>,
): Promise<IdempotentResult<T>> {
  const { store, key, clock } = args;
  checkNonEmptyString('withIdempotency.key', key);
  const leaseMs = checkPositive('withIdempotency.leaseMs', args.leaseMs ?? DEFAULT_LEASE_MS);
  const renewEveryMs = checkNumber('withIdempotency.renewEveryMs', args.renewEveryMs ?? leaseMs / 3, 0);
  const isRetryable = args.isRetryable ?? (() => true);
  const owner = ownerId(args.random);

  const begun = await store.begin(key, owner, leaseMs, clock.now());
  if (begun.outcome === 'succeeded') return { status: 'replayed', value: begun.record.receipt as T };
  if (begun.outcome === 'in_progress') throw new IdempotencyInProgressError(begun.record, clock.now());
  if (begun.outcome === 'failed') throw new IdempotencyFailedError(begun.record);

  const stopRenewing =
    renewEveryMs > 0 && Number.isFinite(renewEveryMs) ? keepLease(args, owner, leaseMs, renewEveryMs) : () => {};
  let value: T;
  try {
    value = await fn();
  } catch (err) {
    stopRenewing();
    await recordFailure(store, key, owner, err, isRetryable(err), clock.now());
    throw err;
  }
  stopRenewing();
  const kept = await store.succeed(key, owner, value, clock.now());
  return kept ? { status: 'executed', value } : { status: 'executed', value, leaseLost: true };
}

/** 12 base-36 characters (~62 bits): owners only need to differ from each other. */
function ownerId(random: Random): string {
  let id = '';
  for (let i = 0; i < OWNER_CHARS; i++) id += Math.floor(random.next() * 36).toString(36);
  return id;
}

/**
 * Renews the lease every `everyMs` on the clock until stopped or until a renewal says the
 * lease is lost. The next timer is set before the renewal settles, so a virtual clock that
 * fires many timers in one step (without running microtasks between them) still renews.
 */
function keepLease(args: WithIdempotencyArgs, owner: string, leaseMs: number, everyMs: number): () => void {
  let cancel = (): void => {};
  const stop = (): void => cancel();
  const tick = (): void => {
    cancel = args.clock.setTimer(everyMs, tick);
    const renewed = args.store.renew(args.key, owner, leaseMs, args.clock.now());
    // Lost (or a store hiccup): stop renewing; the lease runs out and the key becomes retakeable.
    renewed.then((held) => held || stop(), stop);
  };
  cancel = args.clock.setTimer(everyMs, tick);
  return stop;
}

/**
 * Records `fn`'s failure. If the store itself fails here we still rethrow `fn`'s error (the
 * one the caller needs); the key stays `in_progress` until its lease runs out, then is retaken.
 */
async function recordFailure(
  store: IdempotencyStore,
  key: string,
  owner: string,
  err: unknown,
  retryable: boolean,
  now: number,
): Promise<void> {
  const error = err instanceof Error ? err.message : String(err);
  await store.fail(key, owner, { error, retryable }, now).catch(() => false);
}
