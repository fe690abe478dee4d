import type { EngineConfig, LayerConfig, RetryPolicy } from '../../../src/traffic/config.js';
import type { RunSpec } from '../../../src/run/run-spec.js';
import type { FaultPhase } from '../../../src/upstream/config.js';
import type { Dist } from '../../../src/upstream/distribution.js';

export const ENGINE: EngineConfig = {
  maxAttempts: 3,
  backoff: {},
  retryBudget: {},
  throttle: {},
  breaker: {},
  limits: [],
  concurrency: false,
  minAttemptMs: 0,
};

/** A small spec for the fidelity tests: `layers` layers, each with `policy`, against one model. */
export function spec(o: {
  layers: number;
  policy: RetryPolicy | ((layer: number) => RetryPolicy);
  fanout?: Dist;
  faults?: FaultPhase[];
  rate?: number;
  durationMs?: number;
  engine?: Partial<EngineConfig>;
  seed?: number;
}): RunSpec {
  const layers: LayerConfig[] = Array.from({ length: o.layers }, (_, i) => ({
    name: `l${i}`,
    fanout: o.fanout ?? 2,
    timeoutMs: Infinity,
    retry: typeof o.policy === 'function' ? o.policy(i) : o.policy,
    models: i === o.layers - 1 ? ['primary'] : undefined,
  }));
  return {
    name: 'test',
    seed: o.seed ?? 1,
    durationMs: o.durationMs ?? 30_000,
    drainMs: 600_000,
    traffic: {
      arrival: { type: 'constant', rate: o.rate ?? 10 },
      deadlineMs: Infinity,
      layers,
      tokens: { prompt: 100, completion: 50 },
      engine: { ...ENGINE, ...o.engine },
    },
    upstream: {
      cancelOnDisconnect: false,
      models: [
        {
          name: 'primary',
          slots: 100_000,
          queue: 0,
          shedStatus: 529,
          ttftMs: 20,
          tpotMs: 1,
          loadStretch: 0,
          contextTokens: Infinity,
        },
      ],
      faults: o.faults ?? [],
    },
  };
}

export const OUTAGE: FaultPhase[] = [{ kind: 'outage', fromMs: 0, toMs: 1e12, rate: 1, status: 503 }];
export const naive = (attempts: number): RetryPolicy => ({ policy: 'naive', attempts, backoff: { baseMs: 10 } });
export const engine = (e: Partial<EngineConfig> = {}): RetryPolicy => ({ policy: 'engine', engine: e });
export const none: RetryPolicy = { policy: 'none' };
