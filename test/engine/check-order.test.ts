import { describe, expect, it } from 'vitest';
import { classifyStatus } from '../../src/engine/classify.js';
import { Step } from '../../src/engine/guard-call.js';
import { GuardCore } from '../../src/engine/guard-core.js';
import type { GuardOptions } from '../../src/engine/guard-options.js';
import { ManualClock } from '../../src/engine/manual-clock.js';
import { SeededRandom } from '../../src/engine/random.js';

/**
 * The order ARCHITECTURE.md gives for the checks before an attempt — retry budget (retries
 * only) → deadline → limiter → breaker → throttle — read off which refusal a call gets when
 * two checks would both refuse it, and off what the earlier refusal left untouched.
 */
function core(options: Partial<GuardOptions>): { g: GuardCore; clock: ManualClock } {
  const clock = new ManualClock(1_000_000);
  return { g: new GuardCore({ clock, random: new SeededRandom(3), throttle: false, ...options }), clock };
}

const ONE_A_SECOND: GuardOptions['limits'] = [{ name: 'rps', unit: 'requests', rate: 1, per: 'second', burst: 1 }];

describe('the checks before an attempt, in their order', () => {
  it('budget before deadline: a retry without budget is shed for the budget, whatever the deadline says', () => {
    // Room for one retry in the window (0.1/s over 10 s), none earned by first attempts.
    const { g, clock } = core({ retryBudget: { ratio: 0, minRetriesPerSec: 0.1 }, breaker: false });
    const [a, b] = [0, 1].map(() => g.start(clock.now(), { deadlineAt: clock.now() + 5_000 }));
    for (const c of [a, b]) {
      expect(c.next(clock.now())).toBe(Step.Attempt);
      expect(c.complete(classifyStatus(503), 10, -1, clock.now())).toBe(Step.Wait);
    }
    clock.advance(Math.max(a.delayMs, b.delayMs));
    expect(a.next(clock.now())).toBe(Step.Attempt); // takes the one retry
    clock.advance(5_000); // past b's deadline too, and the retry a took still in the budget's window
    expect(b.next(clock.now())).toBe(Step.Shed);
    expect(b.shedReason).toBe('budget');
  });

  it('deadline before limiter: a call that cannot start takes no token from the bucket', () => {
    const { g, clock } = core({ limits: ONE_A_SECOND, minAttemptMs: 50, breaker: false });
    const late = g.start(clock.now(), { deadlineAt: clock.now() + 10 });
    expect(late.next(clock.now())).toBe(Step.Shed);
    expect(late.shedReason).toBe('deadline');
    // The bucket's one token is still there for the next call.
    const next = g.start(clock.now());
    expect(next.next(clock.now())).toBe(Step.Attempt);
  });

  it('limiter before breaker: a full bucket is the refusal even with the breaker open', () => {
    const { g, clock } = core({ limits: ONE_A_SECOND });
    const first = g.start(clock.now());
    expect(first.next(clock.now())).toBe(Step.Attempt); // spends the bucket's token
    first.complete(classifyStatus(200), 1, -1, clock.now());
    g.breakers![0].open('throttle_saturated', clock.now());
    const call = g.start(clock.now());
    expect(call.next(clock.now())).toBe(Step.Shed);
    expect(call.shedReason).toBe('limit');
  });

  it('breaker before throttle: an open breaker sheds for itself, and its probe is never the throttle’s to drop', () => {
    const { g, clock } = core({
      throttle: { k: 1, minRequests: 0, maxDropProbability: 1 },
      breaker: { openMs: 1_000, maxOpenMs: 60_000, halfOpenProbes: 1 },
    });
    // Fail enough to make the throttle drop nearly everything, then open the breaker.
    for (let i = 0; i < 50; i++) {
      const c = g.start(clock.now());
      if (c.next(clock.now()) === Step.Attempt) c.complete(classifyStatus(503), 1, -1, clock.now());
    }
    g.breakers![0].open('throttle_saturated', clock.now());
    const shut = g.start(clock.now());
    expect(shut.next(clock.now())).toBe(Step.Shed);
    expect(shut.shedReason).toBe('breaker');
    // Half-open: the probe goes out although the throttle would drop it.
    clock.advance(60_000);
    expect(g.throttles![0].dropProbability(clock.now())).toBeGreaterThan(0.9);
    const probe = g.start(clock.now());
    expect(probe.next(clock.now())).toBe(Step.Attempt);
  });
});
