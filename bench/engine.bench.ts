import { CircuitBreakerPolicy, ConsecutiveBreaker, ExponentialBackoff, circuitBreaker, handleAll, retry, wrap } from 'cockatiel';
import OpossumBreaker from 'opossum';
import { AdaptiveThrottle } from '../src/engine/adaptive-throttle.js';
import { Guard } from '../src/engine/guard.js';
import { SeededRandom } from '../src/engine/random.js';
import { RetryBudget } from '../src/engine/retry-budget.js';
import { TokenBucket } from '../src/engine/token-bucket.js';
import { systemClock } from '../src/platform/system-clock.js';
import { printTable, timeAsync, timeSync, type Row } from './measure.js';

/** One decision, both steps: throttle + budget deposit + request bucket, then the outcome. */
function decisionPath(): (now: number) => boolean {
  const random = new SeededRandom(1);
  const throttle = new AdaptiveThrottle({}, random);
  const budget = new RetryBudget();
  const bucket = new TokenBucket({ capacity: 1e12, refillPerSec: 1e12 });
  return (now) => {
    if (!bucket.tryTake(1, now) || !throttle.tryAcquire(now)) return false;
    budget.recordFirst(now);
    throttle.record(true, now);
    return true;
  };
}

export async function engineSuite(): Promise<Row[]> {
  const noop = async (): Promise<number> => 1;

  const virtual = decisionPath();
  const virtualNs = timeSync((i) => virtual(i * 0.001));
  const real = decisionPath();
  const realNs = timeSync(() => real(performance.now()));
  const clockReadNs = timeSync(() => performance.now() > 0);

  const guard = new Guard({ clock: systemClock, random: new SeededRandom(2) });
  const cockatiel = wrap(retry(handleAll, { maxAttempts: 2, backoff: new ExponentialBackoff() }), circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) }) as CircuitBreakerPolicy);
  const opossum = new OpossumBreaker(noop);

  // Interleave the async measurements so drift on a shared machine hits them all alike.
  const plain: number[] = [];
  const ours: number[] = [];
  const theirs: number[] = [];
  const opo: number[] = [];
  for (let round = 0; round < 3; round++) {
    plain.push(await timeAsync(() => noop()));
    ours.push(await timeAsync(() => guard.run(noop)));
    theirs.push(await timeAsync(() => cockatiel.execute(noop)));
    opo.push(await timeAsync(() => opossum.fire(), 100_000));
  }
  opossum.shutdown();
  const best = (xs: number[]): number => Math.min(...xs);
  const plainNs = best(plain);
  const overhead = (xs: number[]): number => Math.max(0.1, best(xs) - plainNs);

  const table = [
    { name: 'decision path, virtual clock (throttle + budget + bucket, sync)', 'ns/call': virtualNs, 'overhead ns': virtualNs },
    { name: 'decision path + performance.now()', 'ns/call': realNs, 'overhead ns': realNs },
    { name: '  of which performance.now()', 'ns/call': clockReadNs, 'overhead ns': clockReadNs },
    { name: 'plain await of a no-op', 'ns/call': plainNs, 'overhead ns': 0 },
    { name: 'stormlab guard.run (budget + throttle + breaker)', 'ns/call': best(ours), 'overhead ns': overhead(ours) },
    { name: 'cockatiel wrap(retry, circuitBreaker)', 'ns/call': best(theirs), 'overhead ns': overhead(theirs) },
    { name: 'opossum fire()', 'ns/call': best(opo), 'overhead ns': overhead(opo) },
  ];
  printTable('engine: overhead per guarded call of a resolved no-op', table);
  const cockatielRatio = overhead(theirs) / overhead(ours);
  const opossumRatio = overhead(opo) / overhead(ours);
  console.log(`guard.run overhead is ${cockatielRatio.toFixed(1)}x below cockatiel's (goal >= 4x) and ${opossumRatio.toFixed(1)}x below opossum's (goal >= 8x)`);

  const row = (name: string, value: number, unit = 'ns/call'): Row => ({ suite: 'engine', name, value: Number(value.toFixed(3)), unit });
  return [
    row('decision-path-virtual-clock', virtualNs),
    row('decision-path-real-clock', realNs),
    row('clock-read', clockReadNs),
    row('plain-await', plainNs),
    row('guard-run', best(ours)),
    row('guard-run-overhead', overhead(ours)),
    row('cockatiel-wrap', best(theirs)),
    row('cockatiel-wrap-overhead', overhead(theirs)),
    row('opossum-fire', best(opo)),
    row('opossum-fire-overhead', overhead(opo)),
    row('cockatiel-over-guard-overhead-ratio', cockatielRatio, 'x'),
    row('opossum-over-guard-overhead-ratio', opossumRatio, 'x'),
  ];
}
