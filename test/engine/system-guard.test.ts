import { describe, expect, it } from 'vitest';
import { coreOf, Guard as CoreGuard } from '../../src/engine/guard.js';
import { GuardCore } from '../../src/engine/guard-core.js';
import { OptionError } from '../../src/engine/errors.js';
import { ManualClock } from '../../src/engine/manual-clock.js';
import { Guard, GUARD_DEFAULTS, systemClock } from '../../src/entry/engine.js';

describe('the Guard of stormlab/engine', () => {
  it('works with no options: systemClock and systemRandom() are its defaults', async () => {
    const guard = new Guard({});
    expect(guard).toBeInstanceOf(CoreGuard);
    expect(guard.clock).toBe(systemClock);
    expect(typeof coreOf(guard).random.next()).toBe('number');
    await expect(guard.run(() => 42)).resolves.toBe(42);
    await expect(new Guard().run(async () => 'no argument')).resolves.toBe('no argument');
  });

  it('keeps a clock it is given, and treats undefined options as their defaults', () => {
    const clock = new ManualClock(5);
    const guard = new Guard({ clock, random: undefined, maxAttempts: undefined, breaker: { openMs: undefined } });
    expect(guard.clock).toBe(clock);
    expect(coreOf(guard).maxAttempts).toBe(GUARD_DEFAULTS.maxAttempts);
  });

  it('the engine core itself never defaults the clock: an OptionError names it', () => {
    const err = (() => {
      try {
        new GuardCore({});
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(OptionError);
    expect(err).toMatchObject({ option: 'guard.clock', problem: 'must be a Clock (use systemClock), got undefined' });
  });

  it('option errors carry the option and the problem as fields', () => {
    const clock = new ManualClock(0);
    const err = (() => {
      try {
        new Guard({ clock, breaker: { openMs: 10_000, maxOpenMs: 5_000 } });
      } catch (e) {
        return e as OptionError;
      }
    })();
    expect(err).toMatchObject({
      option: 'breaker.maxOpenMs',
      problem: 'must be a number >= 10000, got 5000',
      message: 'breaker.maxOpenMs must be a number >= 10000, got 5000',
    });
  });

  it('wraps the core instead of being one: what the simulator drives stays out of its API', () => {
    const guard = new Guard({ name: 'api' });
    // Its API is what users call and what watchers read.
    const api = new Set<string>();
    for (let p = Object.getPrototypeOf(guard); p !== Object.prototype; p = Object.getPrototypeOf(p))
      for (const k of Object.getOwnPropertyNames(p)) if (k !== 'constructor') api.add(k);
    expect([...api].filter((k) => !k.startsWith('exec') && !k.startsWith('plain')).sort()).toEqual(
      expect.arrayContaining(['clock', 'name', 'run', 'runDetailed', 'snapshot', 'subscribe', 'targets']),
    );
    // The primitives and the synchronous calls are the core's, reachable only inside the package.
    for (const internal of [
      'start',
      'breakers',
      'throttles',
      'budget',
      'limiter',
      'store',
      'options',
      'emit',
      'breakerFor',
    ])
      expect(internal in guard, internal).toBe(false);
    expect(guard).not.toBeInstanceOf(GuardCore);
    expect(coreOf(guard)).toBeInstanceOf(GuardCore);
    expect(guard.name).toBe('api');
    expect(guard.snapshot().targets.map((t) => t.name)).toEqual(guard.targets.map((t) => t.name));
  });
});
