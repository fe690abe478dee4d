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
const EVERY_MS = 4_000;
const OUTAGE_MS = 60_000;
const RUN_MS = 80_000;
const LATENCY_MS = 100;

interface Attempt {
  at: number;
  target: string;
  ok: boolean;
}

/**
 * One request every 4 s for 80 s; the primary answers 503 for the first 60 s, then is healthy;
 * the fallback is always healthy. Every attempt takes 100 ms. Engine defaults otherwise.
 */
async function outageThenHealthy(options: Partial<GuardOptions> = {}, seed = 1) {
  const clock = new ManualClock(START);
  const events: GuardEvent[] = [];
  const guard = new Guard({
    clock,
    random: new SeededRandom(seed),
    targets: ['primary', 'fallback'],
    onEvent: (e) => events.push({ ...e, at: e.at - START } as GuardEvent),
    ...options,
  });
  const attempts: Attempt[] = [];
  const fn = async (ctx: AttemptContext): Promise<string> => {
    const at = clock.now() - START;
    await sleep(clock, LATENCY_MS);
    const ok = ctx.targetName !== 'primary' || at >= OUTAGE_MS;
    attempts.push({ at, target: ctx.targetName, ok });
    if (!ok) throw new HttpError(503);
    return ctx.targetName;
  };
  const answers: Array<{ at: number; target: string }> = [];
  const requests = RUN_MS / EVERY_MS;
  let finish!: () => void;
  const all = new Promise<void>((resolve) => (finish = resolve));
  const answered = (at: number, target: string): void => {
    answers.push({ at, target });
    if (answers.length === requests) finish();
  };
  for (let t = 0; t < RUN_MS; t += EVERY_MS) {
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

describe('recovery: primary down 60 s then healthy, one request every 4 s, a fallback', () => {
  it('serves from the primary again within 10 s, one probe per open interval, fewer primary attempts than retry-3', async () => {
    const { attempts, answers, events } = await outageThenHealthy();
    const primary = attempts.filter((a) => a.target === 'primary');
    const duringOutage = primary.filter((a) => a.at < OUTAGE_MS);
    const firstBack = primary.find((a) => a.ok);

    // Every request is answered (by the fallback during the outage).
    expect(answers.every((a) => a.target !== 'error')).toBe(true);
    // A client that tries the primary 3 times then falls back makes 3 attempts per request.
    const retry3 = (OUTAGE_MS / EVERY_MS) * 3;
    expect(duringOutage.length).toBeLessThan(retry3);
    // The primary serves again within 10 s of recovering.
    expect(firstBack).toBeDefined();
    expect(firstBack!.at - OUTAGE_MS).toBeLessThanOrEqual(10_000);
    // Requests after that are the primary's again.
    expect(answers.filter((a) => a.at >= firstBack!.at + EVERY_MS).every((a) => a.target === 'primary')).toBe(true);

    // At most one probe per open interval: between going half-open and the next trip or close,
    // at most one attempt reaches the primary.
    const breakerEvents = events.filter(
      (e) => (e.type === 'trip' || e.type === 'recover') && e.target === 'primary',
    );
    for (let i = 0; i < breakerEvents.length; i++) {
      const e = breakerEvents[i];
      if (e.type !== 'recover' || e.state !== 'half_open') continue;
      const end = breakerEvents[i + 1]?.at ?? Infinity;
      const probes = primary.filter((a) => a.at >= e.at && a.at < end && !a.ok);
      expect(probes.length).toBeLessThanOrEqual(1);
    }
    // The figures, for the README.
    expect({
      primaryAttemptsDuringOutage: duringOutage.length,
      retry3,
      backAfterMs: firstBack!.at - OUTAGE_MS,
      trips: breakerEvents.filter((e) => e.type === 'trip').length,
    }).toMatchSnapshot();
  });
});
