import { randomInt } from 'node:crypto';
import { SeededRandom } from '../engine/random.js';

/** A `Random` for production: a fast seeded generator with a seed drawn from the OS. */
export function systemRandom(): SeededRandom {
  return new SeededRandom(randomInt(0, 2 ** 32 - 1));
}
