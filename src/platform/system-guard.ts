import { Guard as CoreGuard } from '../engine/guard.js';
import type { GuardOptions } from '../engine/guard-options.js';
import { systemClock } from './system-clock.js';
import { systemRandom } from './system-random.js';

/**
 * The `Guard` of `stormlab/engine`: the engine's guard with the real clock and OS-seeded
 * randomness as defaults, so `new Guard({})` works in production. The engine's own classes
 * never default them (they may not read the real clock), and the simulator passes its own.
 */
export class Guard extends CoreGuard {
  constructor(options: GuardOptions = {}) {
    super({ ...options, clock: options.clock ?? systemClock, random: options.random ?? systemRandom() });
  }
}
