import type { TrafficInterpreter } from '../traffic/interpreter.js';
import type { MetricsCollector } from './metrics/collector.js';
import type { RunSpec } from './sim/simulation.js';

/**
 * The once-a-second sample both drivers take: whether a fault phase is active, and each engine
 * layer's throttle drop probability, retry-budget balance and whether a breaker is open.
 */
export function sampleSecond(spec: RunSpec, traffic: TrafficInterpreter, metrics: MetricsCollector, now: number): void {
  metrics.faultActive(now, spec.upstream.faults.some((f) => f.fromMs <= now && now < f.toMs));
  for (let l = 0; l < spec.traffic.layers.length; l++) {
    const g = traffic.guardOf(l);
    if (g === undefined) continue;
    const throttle = g.throttles?.[0];
    metrics.engineState(l, now, {
      dropProbability: throttle ? throttle.dropProbability(now) : 0,
      budgetBalance: g.budget ? g.budget.balance(now) : 0,
      breakerOpen: g.breakers ? g.breakers.some((b) => b.state(now) === 'open') : false,
    });
  }
}
