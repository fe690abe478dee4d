import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/engine/manual-clock.js';
import { type Activity, quietFor, settle } from '../../../src/run/live/settle.js';

/** Requests at an upstream, each `[arrives, closes]` in ms on the clock (Infinity: never closes). */
type Request = [number, number];

/** The upstream's activity as its stats would say it at `now`, from a script of requests. */
function activityAt(requests: readonly Request[], now: number): Activity {
  let inFlight = 0;
  let last: number | null = null;
  for (const [from, to] of requests) {
    if (from > now) continue;
    if (to > now) inFlight++;
    const latest = to <= now ? to : from;
    last = last === null ? latest : Math.max(last, latest);
  }
  return { nowMs: now, inFlight, lastActivityMs: last };
}

/** Runs `settle` on a manual clock to its end, moving time to each timer it sets; the times it read at too. */
async function drive(
  read: (now: number) => Promise<Activity>,
  options: { quietMs: number; timeoutMs: number },
  skipAt?: number,
) {
  const clock = new ManualClock();
  const reads: number[] = [];
  const skip = new AbortController();
  let settled = false;
  const result = settle(
    () => {
      reads.push(clock.now());
      return read(clock.now());
    },
    options,
    clock,
    skip.signal,
  ).finally(() => (settled = true));
  for (let i = 0; i < 10_000 && !settled; i++) {
    for (let j = 0; j < 10; j++) await Promise.resolve();
    if (settled) break;
    const next = clock.nextTimerAt();
    if (skipAt !== undefined && !skip.signal.aborted && next >= skipAt) {
      clock.advanceTo(skipAt);
      skip.abort();
      continue;
    }
    if (next !== Infinity) clock.advanceTo(next);
  }
  return { ...(await result), reads };
}

/** A gateway's three tries of one request, 150 ms apart, 5 ms each at the upstream. */
const RETRIES: Request[] = [
  [0, 5],
  [155, 160],
  [310, 315],
];

describe('settle: hop 2 is read once the upstream has been quiet for longer than a backoff', () => {
  it('waits through the gateway backoff and reads after the last retry has been quiet for quietMs', async () => {
    const r = await drive(async (now) => activityAt(RETRIES, now), { quietMs: 400, timeoutMs: 60_000 });
    expect(r.outcome).toBe('quiet');
    expect(r.waitedMs).toBe(715);
    expect(r.reading).toEqual({ nowMs: 715, inFlight: 0, lastActivityMs: 315 });
    // A tenth of a second apart while busy, then straight to where the quiet would end.
    expect(r.reads.length).toBeLessThan(15);
  });

  it('a window shorter than the backoff reads too early: the retries after it are missed', async () => {
    const r = await drive(async (now) => activityAt(RETRIES, now), { quietMs: 100, timeoutMs: 60_000 });
    expect(r.outcome).toBe('quiet');
    expect(r.waitedMs).toBeLessThan(155); // before the gateway's second try
    expect(r.reading?.lastActivityMs).toBe(5);
  });

  it('an upstream that never goes quiet is read when the timeout runs out, and says so', async () => {
    const steady: Request[] = Array.from({ length: 100 }, (_, i): Request => [i * 200, i * 200 + 5]);
    const r = await drive(async (now) => activityAt(steady, now), { quietMs: 400, timeoutMs: 1000 });
    expect(r.outcome).toBe('timeout');
    expect(r.waitedMs).toBe(1000);
  });

  it('a request that never closes keeps it in flight until the timeout', async () => {
    const r = await drive(async (now) => activityAt([[0, Infinity]], now), { quietMs: 0, timeoutMs: 500 });
    expect(r.outcome).toBe('timeout');
    expect(r.reading?.inFlight).toBe(1);
  });

  it('nothing in flight and nothing ever: read at once', async () => {
    const r = await drive(async (now) => activityAt([], now), { quietMs: 5000, timeoutMs: 60_000 });
    expect(r).toMatchObject({ outcome: 'quiet', waitedMs: 0, reads: [0] });
  });

  it('skipped (a second Ctrl-C): one more reading, then it ends', async () => {
    const r = await drive(async (now) => activityAt(RETRIES, now), { quietMs: 400, timeoutMs: 60_000 }, 250);
    expect(r.outcome).toBe('skipped');
    expect(r.waitedMs).toBe(250);
    expect(r.reads.at(-1)).toBe(250);
  });

  it('counters that cannot be read three times in a row: the last good reading, marked unreadable', async () => {
    let calls = 0;
    const r = await drive(
      async (now) => {
        if (++calls > 2) throw new Error('ECONNREFUSED');
        return activityAt([[0, Infinity]], now);
      },
      { quietMs: 400, timeoutMs: 60_000 },
    );
    expect(r.outcome).toBe('unreadable');
    expect(r.reading).toEqual({ nowMs: 100, inFlight: 1, lastActivityMs: 0 });
  });

  it('quietFor: how long since the last request came or closed (forever when none ever did)', () => {
    expect(quietFor({ nowMs: 900, inFlight: 0, lastActivityMs: 400 })).toBe(500);
    expect(quietFor({ nowMs: 900, inFlight: 0, lastActivityMs: null })).toBe(Number.POSITIVE_INFINITY);
  });
});
