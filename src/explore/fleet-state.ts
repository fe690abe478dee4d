import type { SharedState } from '../run/metrics/result.js';
import type { RunSpec } from '../run/run-spec.js';
import { resolveEngine } from '../traffic/engine-guard.js';

/**
 * What a fleet shares of a run's engines (`RedisStore`, one set of keys per run and variant):
 * the windows and buckets of every engine layer and engine-guarded tool call — retry budget,
 * throttle, the counts that trip a breaker, token buckets — while a breaker's state (open,
 * half-open) and a concurrency limit stay each worker's, as they do across processes sharing
 * one `RedisStore`. `store: none` when no layer runs the engine.
 */
export function sharedStateOf(spec: RunSpec): SharedState {
  const cfg = spec.traffic;
  const engines = cfg.layers.flatMap((l) => [
    ...(l.retry.policy === 'engine' ? [resolveEngine(cfg.engine, l.retry.engine)] : []),
    ...(l.tools ?? []).flatMap((t) => {
      const retry = t.retry ?? l.retry;
      return retry.policy === 'engine' ? [resolveEngine(cfg.engine, retry.engine)] : [];
    }),
  ]);
  if (engines.length === 0) return { store: 'none', shared: [], perWorker: [] };
  const any = (f: (e: (typeof engines)[number]) => boolean): boolean => engines.some(f);
  const shared = [
    ...(any((e) => e.retryBudget !== false) ? ['retryBudget'] : []),
    ...(any((e) => e.throttle !== false) ? ['throttle'] : []),
    ...(any((e) => e.breaker !== false) ? ['breakerCounts'] : []),
    ...(any((e) => e.limits.length > 0) ? ['limits'] : []),
  ];
  const perWorker = [
    ...(any((e) => e.breaker !== false) ? ['breakerState'] : []),
    ...(any((e) => e.concurrency !== false) ? ['concurrency'] : []),
  ];
  return { store: 'redis', shared, perWorker };
}
