import type { BackoffOptions } from '../engine/backoff.js';
import type { Clock } from '../engine/clock.js';
import { DEFAULT_ENGINE_PROFILE, ENGINE_PROFILES, type EngineProfileName } from '../engine/engine-profiles.js';
import { GuardCore } from '../engine/guard-core.js';
import { withDefaults } from '../engine/options.js';
import type { SeededRandom } from '../engine/random.js';
import type { StateStore } from '../engine/store.js';
import type { TargetOption } from '../engine/target.js';
import type { EngineConfig, EngineState, TargetEngineConfig } from './config.js';
import type { StreamLimits } from './stream-limits.js';

/**
 * The keys a simulated call carries for its engine's limits (`limits[].keyBy`): its root
 * task's tenant and user, a model call's model (its layer's first), a tool call's tool. A
 * call without a limit's key shares one bucket with the others, as in the engine.
 */
export const LIMIT_KEYS = ['tenant', 'user', 'model', 'tool'] as const;

/** One layer's engine settings, every one decided: what its guard, stream guard and waits use. */
export interface ResolvedEngine extends Required<Omit<EngineConfig, 'stream' | 'state'>> {
  profile: EngineProfileName;
  state: EngineState;
  stream: StreamLimits;
}

/** The stream limits of an engine's calls to `model`: the engine's, with the model target's own over them. */
export function targetStream(e: ResolvedEngine, model: string | undefined): StreamLimits {
  const own = model === undefined ? undefined : e.targets[model]?.stream;
  return own === undefined ? e.stream : { ...e.stream, ...own };
}

/** Options that are a mapping or `false` (off); the profile or primitive defaults fill a mapping. */
type Switchable = 'retryBudget' | 'throttle' | 'breaker' | 'concurrency';

/**
 * The engine of one layer as it runs: the profile's defaults (`ENGINE_PROFILES`: the layer's
 * `profile`, else the scenario's, else `http`, what `guardedFetch` ships), the scenario's
 * `engine:` block over them, and the layer's `retry.engine:` over that. Option by option: a
 * mapping merges key by key (a layer's `breaker: {openMs: 1s}` keeps the block's
 * `failureRatio`), `false` turns an option off and a mapping after it turns it on again,
 * `limits` is replaced as a whole.
 */
export function resolveEngine(base: EngineConfig, over: Partial<EngineConfig>): ResolvedEngine {
  const name = over.profile ?? base.profile ?? DEFAULT_ENGINE_PROFILE;
  const p = ENGINE_PROFILES[name];
  const on = (key: Switchable, profile: object): object | false => {
    let v: object | false = key === 'concurrency' ? false : profile;
    for (const level of [base[key], over[key]]) {
      if (level === undefined) continue;
      v = level === false ? false : withDefaults(v === false ? profile : v, level);
    }
    return v;
  };
  const s = { ...base.stream, ...over.stream };
  return {
    profile: name,
    maxAttempts: over.maxAttempts ?? base.maxAttempts,
    backoff: withDefaults<Partial<BackoffOptions>>(base.backoff ?? {}, over.backoff),
    retryBudget: on('retryBudget', p.retryBudget) as ResolvedEngine['retryBudget'],
    throttle: on('throttle', p.throttle) as ResolvedEngine['throttle'],
    breaker: on('breaker', p.breaker) as ResolvedEngine['breaker'],
    concurrency: on('concurrency', {}) as ResolvedEngine['concurrency'],
    limits: over.limits ?? base.limits,
    minAttemptMs: over.minAttemptMs ?? base.minAttemptMs,
    state: over.state ?? base.state ?? 'local',
    stream: {
      commit: s.commit ?? p.stream.commit,
      resume: s.resume ?? p.stream.resume,
      firstTokenMs: s.firstTokenMs ?? p.stream.firstTokenMs,
      idleMs: s.idleMs ?? p.stream.idleMs,
      headersMs: s.headersMs ?? p.stream.headersTimeoutMs,
    },
    headersTimeoutMs: over.headersTimeoutMs ?? base.headersTimeoutMs ?? p.headersTimeoutMs,
    targets: mergeTargets(base.targets, over.targets),
  };
}

/** A layer's `targets` over the block's, model by model (a model's `stream` merged key by key). */
function mergeTargets(
  base: EngineConfig['targets'],
  over: EngineConfig['targets'],
): Readonly<Record<string, TargetEngineConfig>> {
  if (over === undefined) return base ?? {};
  if (base === undefined) return over;
  const out: Record<string, TargetEngineConfig> = { ...base };
  for (const [model, t] of Object.entries(over))
    out[model] = { ...out[model], ...t, stream: { ...out[model]?.stream, ...t.stream } };
  return out;
}

/** Whether an engine's limits pick buckets by a key, so its calls must carry their keys. */
export function keyedLimits(e: ResolvedEngine): boolean {
  return e.limits.some((l) => l.keyBy !== undefined);
}

/**
 * The engine of one layer (`resolveEngine`). Throws the engine's `OptionError` for settings
 * that do not fit together (a breaker's `maxOpenMs` below its `openMs`): scenario validation
 * calls it too, so that is a message naming the setting before the run, not a crash in it.
 * `store` is where its state lives (a store shared by a layer's replicas); without one the
 * guard keeps its own.
 */
export function engineGuard(
  base: EngineConfig,
  over: Partial<EngineConfig>,
  name: string,
  targets: TargetOption[],
  clock: Clock,
  random: SeededRandom,
  store?: StateStore,
): GuardCore {
  const e = resolveEngine(base, over);
  return new GuardCore({
    clock,
    random: random.split('engine'),
    name,
    targets,
    ...(store === undefined ? {} : { store }),
    maxAttempts: e.maxAttempts,
    backoff: e.backoff,
    retryBudget: e.retryBudget,
    throttle: e.throttle,
    breaker: e.breaker,
    limits: e.limits,
    concurrency: e.concurrency,
    minAttemptMs: e.minAttemptMs,
  });
}
