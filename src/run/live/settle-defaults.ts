/**
 * When the second hop is read. A gateway goes on retrying calls the driver gave up on, after
 * the driver stopped (waiting its backoff between tries, with nothing in flight at the
 * upstream meanwhile), so its figures are read once the upstream has nothing in flight and no
 * request has come for `quietMs` — longer than a gateway's backoff — or once `timeoutMs` has
 * passed since the driver stopped, whichever is first.
 */
export interface SettleOptions {
  /** @default 5000 */
  quietMs: number;
  /** @default 60000 */
  timeoutMs: number;
}

/** `--settle-quiet` and `--settle-timeout` when not given. */
export const SETTLE_DEFAULTS: SettleOptions = { quietMs: 5000, timeoutMs: 60_000 };
