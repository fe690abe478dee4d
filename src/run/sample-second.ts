import type { TrafficInterpreter } from '../traffic/interpreter.js';
import { engineSample } from './engine-sample.js';
import type { MetricsCollector } from './metrics/collector.js';
import type { RunSpec } from './run-spec.js';

/**
 * The once-a-second sample both drivers take: whether a fault phase is active, and each engine
 * layer's throttle drop probability, retry-budget balance and whether a breaker is open
 * (over its replicas when it has several: see `engineSample`).
 */
export function sampleSecond(spec: RunSpec, traffic: TrafficInterpreter, metrics: MetricsCollector, now: number): void {
  metrics.faultActive(
    now,
    spec.upstream.faults.some((f) => f.fromMs <= now && now < f.toMs),
  );
  for (let l = 0; l < spec.traffic.layers.length; l++) {
    const engines = traffic.enginesOf(l);
    if (engines !== undefined) metrics.engineState(l, now, engineSample(engines, now));
  }
}
