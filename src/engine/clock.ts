/**
 * Time is an input. Every engine primitive takes `now` (milliseconds, monotonic) from a
 * `Clock`; none reads the real clock. The simulator passes a virtual clock, production a
 * system clock (see `systemClock` in the package entry), tests a `ManualClock`.
 */
export interface Clock {
  /** Milliseconds on a monotonic timeline. The system clock's timeline is epoch-based. */
  now(): number;
  /** Calls `fn` once after `ms` milliseconds; the returned function cancels it. */
  setTimer(ms: number, fn: () => void): () => void;
}

/** Resolves after `ms` on `clock`, or rejects with the signal's reason when it aborts. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      cancel();
      reject(signal!.reason);
    };
    const cancel = clock.setTimer(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
