import type { SdkName } from './sdk-presets.js';
import type { AdaptiveThrottleOptions } from '../engine/adaptive-throttle.js';
import type { BackoffOptions } from '../engine/backoff.js';
import type { CircuitBreakerOptions } from '../engine/circuit-breaker.js';
import type { ConcurrencyLimiterOptions } from '../engine/concurrency-limiter.js';
import type { EngineProfileName } from '../engine/engine-profiles.js';
import type { LimitDimension } from '../engine/limiter.js';
import type { RetryBudgetOptions } from '../engine/retry-budget.js';
import type { Dist } from '../upstream/distribution.js';
import type { StreamLimits } from './stream-limits.js';
import type { EntryConfig, InferenceConfig, TenantConfig, ToolCallConfig, UsersConfig } from './tool-call-config.js';

export type { EntryConfig, InferenceConfig, TenantConfig, ToolCallConfig, UsersConfig } from './tool-call-config.js';

/** How root tasks arrive at the top layer. Rates are root tasks per second. */
export type ArrivalConfig =
  | { type: 'constant'; rate: number }
  | { type: 'poisson'; rate: number }
  /** Rate moves linearly from `from` to `to` over the run. */
  | { type: 'ramp'; from: number; to: number }
  /** `rate`, except `burstRate` for `lengthMs` every `everyMs`. */
  | { type: 'burst'; rate: number; burstRate: number; everyMs: number; lengthMs: number }
  /** `users` closed-loop users: each starts a task, waits for it, thinks, starts the next. */
  | { type: 'closed'; users: number; thinkMs: Dist }
  /**
   * Root tasks at exactly these times, ms from the run's start, ascending (not a scenario's:
   * `calibrate` replays the traced arrivals to simulate its fit against what was observed).
   */
  | { type: 'replay'; atMs: readonly number[] };

/**
 * Where a layer's replicas keep their engine state: `local`, each its own (per-process limits
 * and budgets, N times too generous with N replicas), or `shared`, one store for all of them
 * (an idealised shared store: no sync delay, unlike `RedisStore`'s 100 ms).
 */
export type EngineState = 'local' | 'shared';

/**
 * The engine's options as a scenario gives them (the Guard's, less clock/random/store). Each is
 * merged over the `profile`'s defaults (`ENGINE_PROFILES`), a layer's `retry.engine` over the
 * scenario's `engine:` block (`resolveEngine`).
 */
export interface EngineConfig {
  /** Whose defaults fill what is not given: `http` (as `stormlab/undici` ships) or `core` (`new Guard()`). @default 'http' */
  profile?: EngineProfileName;
  maxAttempts: number;
  backoff: Partial<BackoffOptions>;
  retryBudget: Partial<RetryBudgetOptions> | false;
  throttle: Partial<AdaptiveThrottleOptions> | false;
  breaker: Partial<CircuitBreakerOptions> | false;
  limits: LimitDimension[];
  concurrency: Partial<ConcurrencyLimiterOptions> | false;
  minAttemptMs: number;
  /** How the replicas of a layer keep their state (no difference with one replica). @default 'local' */
  state?: EngineState;
  /** The stream guard's limits, for engine layers whose calls are streamed. @default the profile's */
  stream?: Partial<StreamLimits>;
  /** Longest wait for a non-streamed model call's answer (its headers come with it). @default the profile's */
  headersTimeoutMs?: number;
  /**
   * Settings of one model target, by model name, over the engine's own: a reasoning model's
   * stream limits (`{o3: {stream: {firstTokenMs: 120000}}}`), as `TargetSpec.stream` sets them
   * in the HTTP integrations. @default none
   */
  targets?: Readonly<Record<string, TargetEngineConfig>>;
}

/** What one model target sets for itself (`EngineConfig.targets`). */
export interface TargetEngineConfig {
  /** The stream limits of calls to this model (not the commit policy, which is the guard's). */
  stream?: Partial<Omit<StreamLimits, 'commit'>>;
}

/** Who retries at a layer, and how. */
export type RetryPolicy =
  /** One attempt, never retried. */
  | { policy: 'none' }
  /** Retries every failure up to `attempts` in all, with fixed exponential backoff (no budget, no jitter by default). */
  | { policy: 'naive'; attempts: number; backoff: Partial<BackoffOptions> }
  /** A client library's own retry loop (`sdk-presets.ts`): openai by default, `maxRetries` as the library ships unless set. */
  | { policy: 'sdk'; sdk: SdkName; maxRetries: number; runnerRetries: number }
  /** The stormlab engine (one Guard per layer), with the scenario's engine options merged with these. */
  | { policy: 'engine'; engine: Partial<EngineConfig> };

export interface LayerConfig {
  name: string;
  /** Children each call at this layer starts at the next layer (ignored on the last layer). */
  fanout: Dist;
  /**
   * The children of an attempt run one after another, each once the one before it succeeded
   * (an agent loop's model calls), instead of all at once; the first failure ends the attempt.
   * @default false
   */
  sequential?: boolean;
  /** Per-attempt timeout at this layer, ms. @default Infinity */
  timeoutMs: number;
  retry: RetryPolicy;
  /**
   * Processes the layer runs as: its calls are spread round-robin over this many engines
   * (`retry.policy: engine` only; other policies keep no state to split). @default 1
   */
  replicas?: number;
  /** Last layer only: the model its calls go to, then the fallback models in order. @default [first model] */
  models?: string[];
  /** Last layer only: its LLM calls are streamed (SSE), so stream faults reach them. @default false */
  stream?: boolean;
  /** Tool calls each attempt makes once its model calls below have succeeded (not on the last layer). */
  tools?: ToolCallConfig[];
  /** Last layer only: a concurrency limit and bounded queue in front of its model attempts. */
  inference?: InferenceConfig;
  /** The stage (a name in `TrafficConfig.stages`) whose budget each call at this layer spends, retries and waits included. */
  stage?: string;
  /** A call out of its stage's budget returns what it has (a partial result) instead of failing. @default false */
  partial?: boolean;
}

export interface TrafficConfig {
  arrival: ArrivalConfig;
  /** Deadline of a root task, ms from its intended start; it propagates down the tree. @default Infinity */
  deadlineMs: number;
  layers: LayerConfig[];
  /** Prompt and completion tokens of each leaf (LLM) call. */
  tokens: { prompt: Dist; completion: Dist };
  /** Defaults for layers whose policy is `engine`. */
  engine: EngineConfig;
  /** How the users behind the root tasks behave; absent: they wait, and never resubmit. */
  users?: UsersConfig;
  /** The tenants root tasks belong to (per-tenant figures in the result); absent: one. */
  tenants?: TenantConfig[];
  /** A token bucket per tenant (or per user of each tenant) in front of the root layer, refusing with a retry-after hint. */
  entry?: EntryConfig;
  /** Stage budgets, ms, by stage name: a call at a layer with `stage` ends when its budget is spent. */
  stages?: Record<string, number>;
}
