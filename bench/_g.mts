import { Guard } from '../src/engine/guard.js';
import { SeededRandom } from '../src/engine/random.js';
import { systemClock } from '../src/platform/system-clock.js';
import { timeAsync } from './measure.js';
const noop = async () => 1;
const mk = (o: object) => new Guard({ clock: systemClock, random: new SeededRandom(1), ...o });
const gs: Record<string, Guard> = {
  all: mk({}),
  bare: mk({ throttle: false, breaker: false, retryBudget: false }),
  budget: mk({ throttle: false, breaker: false }),
  throttle: mk({ breaker: false, retryBudget: false }),
  breaker: mk({ throttle: false, retryBudget: false }),
};
const then0 = (fn: () => Promise<number>) => fn().then((v) => v + 1);
for (let r = 0; r < 2; r++) {
  console.log('plain', (await timeAsync(() => noop())).toFixed(1), 'then0', (await timeAsync(() => then0(noop))).toFixed(1));
  for (const [k, g] of Object.entries(gs)) console.log(k, (await timeAsync(() => g.run(noop))).toFixed(1));
}
