import { Guard } from '../src/engine/guard.js';
import { SeededRandom } from '../src/engine/random.js';
import { systemClock } from '../src/platform/system-clock.js';
const noop = async () => 1;
const g = new Guard({ clock: systemClock, random: new SeededRandom(1) });
for (let i = 0; i < 3_000_000; i++) await g.run(noop);
