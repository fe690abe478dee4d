import type { UpstreamConfig } from '../upstream/config.js';

/**
 * What `stormlab serve` runs without `--scenario`: two healthy models, `primary` and
 * `secondary` (the names the bundled scenarios use), with room for a few hundred requests at
 * once, LLM-like latency (a lognormal first token around 200 ms, 5 ms per output token) and
 * quotas high enough to stay out of the way while their headers still show.
 */
export const DEFAULT_UPSTREAM: UpstreamConfig = {
  models: ['primary', 'secondary'].map((name) => ({
    name,
    slots: 256,
    queue: 1024,
    shedStatus: 529,
    ttftMs: { dist: 'lognormal', median: 200, p99: 800 },
    tpotMs: 5,
    rpm: 100_000,
    tpm: 20_000_000,
    loadStretch: 0,
    contextTokens: 128_000,
  })),
  faults: [],
  cancelOnDisconnect: false,
};
