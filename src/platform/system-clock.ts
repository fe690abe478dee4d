import type { Clock } from '../engine/clock.js';

const origin = performance.timeOrigin;
const perf = performance;
// Timers keep the process alive like any setTimeout: a backoff wait is work in progress.
const setTimer: Clock['setTimer'] = (ms, fn) => {
  const t = setTimeout(fn, ms);
  return () => clearTimeout(t);
};

/**
 * The precise real clock: epoch-based milliseconds that never go backwards
 * (`performance.timeOrigin + performance.now()`), read afresh on every call (40–70 ns, by host),
 * and real timers.
 */
export const preciseClock: Clock = {
  now: () => origin + perf.now(),
  setTimer,
};

/** How many reads a cached time may serve before it is read again, even inside one turn. */
const READS_PER_REFRESH = 256;

// One object rather than module-level `let`s: property access is cheaper than checked bindings.
const state = { cached: 0, fresh: false, reads: 0 };
const expire = (): void => {
  state.fresh = false;
};

/**
 * The real clock for production, cached in the manner of nginx's per-event-loop time: a read
 * returns the time last read until a 1 ms timer has fired (the event loop has moved on) or
 * 256 reads have been served, then reads it again. Resolution is therefore about 1 ms plus
 * event-loop lag, which is far below anything the engine's windows (1 s and more), deadlines
 * and LLM latencies care about, and a guarded call costs one clock read per millisecond of
 * traffic instead of two per call. No timer runs while nothing reads the clock.
 */
export const systemClock: Clock = {
  now(): number {
    const s = state;
    if (s.fresh && ++s.reads < READS_PER_REFRESH) return s.cached;
    const t = origin + perf.now();
    if (t > s.cached) s.cached = t;
    s.reads = 0;
    if (!s.fresh) {
      s.fresh = true;
      setTimeout(expire, 1).unref();
    }
    return s.cached;
  },
  setTimer,
};
