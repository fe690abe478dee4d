import { StormlabError } from '../errors.js';

/**
 * A shared store (Redis) could not answer. Thrown where guessing would be wrong — an
 * idempotency store that cannot be read must not say a key is free — so the caller learns
 * that the store, not its own work, failed. `cause` is the client's error.
 */
export class StoreUnavailableError extends StormlabError {
  /** Which store failed, e.g. `RedisIdempotencyStore (prefix "stormlab")`. */
  readonly store: string;
  constructor(store: string, operation: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super('ERR_STORMLAB_STORE_UNAVAILABLE', `${store} could not ${operation}: ${reason}`, { cause });
    this.store = store;
  }
}
