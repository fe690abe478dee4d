/**
 * `stormlab/prometheus`: the engine's events and state as Prometheus metrics (prom-client).
 * `guardMetrics(guard)` counts attempts, retries, sheds, fallbacks, trips and tokens and reads
 * breaker, throttle, budget, limiter and concurrency gauges at scrape time;
 * `storeMetrics(redisStore)` says whether shared state is reachable.
 */
export {
  guardMetrics,
  storeMetrics,
  type GuardMetricsOptions,
  type ObservableStore,
} from '../integrations/prometheus-metrics.js';
