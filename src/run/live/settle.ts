import { type Clock, sleep } from '../../engine/clock.js';
import type { HopSettle } from '../metrics/result.js';
import type { SettleOptions } from './settle-defaults.js';

/** What a reading must say for the wait to end: the upstream's clock, its requests in flight, its last activity. */
export interface Activity {
  nowMs: number;
  inFlight: number;
  /** When a request last arrived or closed, on the upstream's clock; null before the first. */
  lastActivityMs: number | null;
}

/** How often the upstream is read while something is in flight there, and at most between readings. */
const BUSY_POLL_MS = 100;
const MAX_POLL_MS = 1000;
const MIN_POLL_MS = 10;
/** Readings that fail in a row before the wait gives up (the last good one stands). */
const MAX_FAILED_READS = 3;

/** How long the upstream has been quiet at a reading (Infinity: it never had a request). */
export function quietFor(a: Activity): number {
  return a.lastActivityMs === null ? Number.POSITIVE_INFINITY : Math.max(0, a.nowMs - a.lastActivityMs);
}

/** The end of a wait: the last good reading, how the wait ended, and how long it took. */
export interface Settled<R> {
  reading: R | undefined;
  outcome: HopSettle['outcome'];
  waitedMs: number;
}

/**
 * Reads the upstream (`read`) until it has settled (see `SettleOptions`), the time is out, or
 * `skip` aborts — then it takes one more reading, so the figures are the freshest there are.
 * `onReading` hears every good reading with the time waited so far (a dashboard shows it).
 * Between readings it sleeps on `clock`: as long as the quiet still has to last when nothing is
 * in flight, a tenth of a second when something is.
 */
export async function settle<R extends Activity>(
  read: () => Promise<R>,
  options: SettleOptions,
  clock: Clock,
  skip?: AbortSignal,
  onReading?: (reading: R, waitedMs: number) => void,
): Promise<Settled<R>> {
  const started = clock.now();
  let reading: R | undefined;
  let failed = 0;
  const end = (outcome: HopSettle['outcome']): Settled<R> => ({ reading, outcome, waitedMs: clock.now() - started });
  for (;;) {
    try {
      reading = await read();
      failed = 0;
      onReading?.(reading, clock.now() - started);
    } catch {
      if (++failed >= MAX_FAILED_READS) return end('unreadable');
    }
    if (skip?.aborted) return end('skipped');
    if (reading !== undefined && reading.inFlight === 0 && quietFor(reading) >= options.quietMs) return end('quiet');
    const left = options.timeoutMs - (clock.now() - started);
    if (left <= 0) return end('timeout');
    const wanted = reading !== undefined && reading.inFlight === 0 ? options.quietMs - quietFor(reading) : BUSY_POLL_MS;
    try {
      await sleep(clock, Math.max(MIN_POLL_MS, Math.min(wanted, MAX_POLL_MS, left)), skip);
    } catch {
      // Skipped while asleep: the next pass takes the last reading and ends.
    }
  }
}
