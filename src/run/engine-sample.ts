import type { EngineReplicas } from '../traffic/engine-replicas.js';
import type { EngineSample } from './metrics/collector.js';

/**
 * A layer's engine state for the once-a-second sample. One replica: its throttle's drop
 * probability (first target), its retry-budget balance and whether a breaker is open. Several:
 * the mean drop probability (what the next call, wherever it lands, is dropped with), the
 * retries the layer may still make — every replica's balance summed with `local` state, the one
 * shared balance with `shared` (each replica reads the same window) —, "a breaker is open" if
 * any replica's is, and how many replicas have one open.
 */
export function engineSample(engines: EngineReplicas, now: number): EngineSample {
  const guards = engines.guards;
  if (guards.length === 1) {
    const g = guards[0];
    const throttle = g.throttles?.[0];
    return {
      dropProbability: throttle ? throttle.dropProbability(now) : 0,
      budgetBalance: g.budget ? g.budget.balance(now) : 0,
      breakerOpen: g.breakers ? g.breakers.some((b) => b.state(now) === 'open') : false,
    };
  }
  let drop = 0;
  let balance = 0;
  let open = 0;
  for (const g of guards) {
    const throttle = g.throttles?.[0];
    if (throttle) drop += throttle.dropProbability(now);
    if (g.budget) balance += g.budget.balance(now);
    if (g.breakers?.some((b) => b.state(now) === 'open')) open++;
  }
  const shared = engines.state === 'shared';
  const first = guards[0].budget;
  return {
    dropProbability: drop / guards.length,
    budgetBalance: shared ? (first ? first.balance(now) : 0) : balance,
    breakerOpen: open > 0,
    replicas: guards.length,
    replicasOpen: open,
  };
}
