import { loadPeer } from '../integrations/optional-peer.js';

/**
 * `stormlab/prometheus`: the engine's events and state as Prometheus metrics (prom-client).
 * `guardMetrics(guard)` counts attempts, retries, sheds, fallbacks, trips and tokens and reads
 * breaker, throttle, budget, limiter and concurrency gauges at scrape time;
 * `storeMetrics(redisStore)` says whether shared state is reachable.
 *
 * prom-client is an optional peer dependency: loaded here, so that without it the import
 * fails with one line saying what to install.
 */
const metrics = await loadPeer(
  'prom-client',
  'stormlab/prometheus',
  () => import('../integrations/prometheus-metrics.js'),
);

export const guardMetrics: typeof metrics.guardMetrics = metrics.guardMetrics;
export const storeMetrics: typeof metrics.storeMetrics = metrics.storeMetrics;
export type { GuardMetricsOptions, ObservableStore } from '../integrations/prometheus-metrics.js';
export { MissingPeerError } from '../integrations/optional-peer.js';
