import { setImmediate as tick } from 'node:timers/promises';
import type { ManualClock } from '../../src/engine/manual-clock.js';

/**
 * Settles `work` on a manual clock: lets pending promise callbacks run, then jumps the clock
 * to the next timer, until `work` settles. Bounded, so a test that would hang fails instead.
 */
export async function drive<T>(clock: ManualClock, work: Promise<T>, maxSteps = 10_000): Promise<T> {
  let settled = false;
  const done = work.then(
    (v) => ((settled = true), v),
    (e) => {
      settled = true;
      throw e;
    },
  );
  done.catch(() => {});
  for (let i = 0; i < maxSteps && !settled; i++) {
    await tick();
    if (settled) break;
    const at = clock.nextTimerAt();
    if (at !== Infinity) clock.advanceTo(at);
  }
  if (!settled) throw new Error(`drive: work did not settle within ${maxSteps} steps`);
  return done;
}
