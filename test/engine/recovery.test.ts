import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sleep } from '../../src/engine/clock.js';
import type { GuardEvent } from '../../src/engine/guard-events.js';
import { Guard, type AttemptContext } from '../../src/engine/guard.js';
import type { GuardOptions } from '../../src/engine/guard-options.js';
import { ManualClock } from '../../src/engine/manual-clock.js';
import { SeededRandom } from '../../src/engine/random.js';
import { drive } from '../helpers/drive.js';

class HttpError extends Error {
  constructor(readonly status: number) {
    super(`HTTP ${status}`);
  }
}

const START = 1_000_000;
const LATENCY_MS = 100;

interface Attempt {
  at: number;
  target: string;
  ok: boolean;
}

interface Scenario {
  /** The primary answers 503 until this time, then is healthy. */
  outageMs: number;
  /** One request every this many ms. */
  everyMs: number;
  runMs: number;
  seed: number;
}

/**
 * One request every `everyMs`; the primary answers 503 for the first `outageMs`, then is
 * healthy; the fallback is always healthy. Every attempt takes 100 ms. Engine defaults otherwise.
 */
async function outageThenHealthy(s: Scenario, options: Partial<GuardOptions> = {}) {
  const clock = new ManualClock(START);
  const events: GuardEvent[] = [];
  const guard = new Guard({
    clock,
    random: new SeededRandom(s.seed),
    targets: ['primary', 'fallback'],
    onEvent: (e) => events.push({ ...e, at: e.at - START } as GuardEvent),
    ...options,
  });
  const attempts: Attempt[] = [];
  const fn = async (ctx: AttemptContext): Promise<string> => {
    const at = clock.now() - START;
    await sleep(clock, LATENCY_MS);
    const ok = ctx.targetName !== 'primary' || at >= s.outageMs;
    attempts.push({ at, target: ctx.targetName, ok });
    if (!ok) throw new HttpError(503);
    return ctx.targetName;
  };
  const answers: Array<{ at: number; target: string }> = [];
  const requests = Math.ceil(s.runMs / s.everyMs);
  let finish!: () => void;
  const all = new Promise<void>((resolve) => (finish = resolve));
  const answered = (at: number, target: string): void => {
    answers.push({ at, target });
    if (answers.length === requests) finish();
  };
  for (let t = 0; t < s.runMs; t += s.everyMs) {
    clock.setTimer(t, () => {
      guard.runDetailed(fn).then(
        (r) => answered(t, r.target),
        () => answered(t, 'error'),
      );
    });
  }
  await drive(clock, all, 100_000);
  return { attempts, answers, events };
}

describe('recovery: primary down, then healthy, with a fallback', () => {
  const ISSUE = { outageMs: 60_000, everyMs: 4_000, runMs: 80_000, seed: 1 };

  it('one request every 4 s, 60 s down: the primary serves again 4 s after it heals, one probe per open interval, 16 primary attempts instead of 45', async () => {
    const { attempts, answers, events } = await outageThenHealthy(ISSUE);
    const primary = attempts.filter((a) => a.target === 'primary');
    const duringOutage = primary.filter((a) => a.at < ISSUE.outageMs);
    const firstBack = primary.find((a) => a.ok)!;

    // Every request is answered (by the fallback during the outage).
    expect(answers.every((a) => a.target !== 'error')).toBe(true);
    // A client that tries the primary 3 times then falls back makes 3 attempts per request.
    const retry3 = (ISSUE.outageMs / ISSUE.everyMs) * 3;
    expect(retry3).toBe(45);
    expect(duringOutage.length).toBe(16);
    // The primary serves again within 10 s of recovering (here: the first request after it).
    expect(firstBack.at - ISSUE.outageMs).toBe(4_000);
    // Every request from then on is the primary's again.
    expect(answers.filter((a) => a.at >= firstBack.at).every((a) => a.target === 'primary')).toBe(true);

    // At most one probe per open interval: between going half-open and the next transition,
    // at most one attempt reaches the primary.
    const breaker = events.filter((e) => (e.type === 'trip' || e.type === 'recover') && e.target === 'primary');
    for (let i = 0; i < breaker.length; i++) {
      const e = breaker[i];
      if (e.type !== 'recover' || e.state !== 'half_open') continue;
      const end = breaker[i + 1]?.at ?? Infinity;
      expect(primary.filter((a) => a.at >= e.at && a.at < end && !a.ok).length).toBeLessThanOrEqual(1);
    }
    // The throttle hit its cap after 10 failures and handed over to the breaker; its open time
    // grew once (2.5 s → 5 s) and stayed there.
    const trips = breaker.filter((e) => e.type === 'trip');
    expect(trips.map((e) => (e.type === 'trip' ? `${e.cause}/${e.openMs}` : ''))).toEqual([
      'throttle_saturated/2500',
      ...Array(6).fill('probe_failed/5000'),
    ]);
  });

  it('property: the primary is back at most maxOpenMs + one gap between requests after it heals', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 20, max: 70 }),
        fc.constantFrom(1_000, 2_500, 4_000),
        fc.integer({ min: 1, max: 1000 }),
        async (outageS, everyMs, seed) => {
          const s = { outageMs: outageS * 1_000 + 370, everyMs, runMs: outageS * 1_000 + 30_000, seed };
          const { attempts, answers } = await outageThenHealthy(s);
          const back = attempts.find((a) => a.target === 'primary' && a.ok);
          expect(back).toBeDefined();
          // maxOpenMs (5 s by default) + the gap to the next request (+ the failed probe's latency)
          expect(back!.at - s.outageMs).toBeLessThanOrEqual(5_000 + everyMs + LATENCY_MS);
          expect(answers.every((a) => a.target !== 'error')).toBe(true);
        },
      ),
      { seed: 3, numRuns: 25 },
    );
  });
});
