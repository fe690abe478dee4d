import { ADAPTIVE_THROTTLE_DEFAULTS, type AdaptiveThrottleOptions } from './adaptive-throttle.js';
import { CIRCUIT_BREAKER_DEFAULTS, type CircuitBreakerOptions } from './circuit-breaker.js';
import { RETRY_BUDGET_DEFAULTS, type RetryBudgetOptions } from './retry-budget.js';

/**
 * When a guarded stream reaches the caller:
 * - `first-token`: at its first content token. Everything before it (role chunks, pings,
 *   `message_start`) is held, so a failure before the first token is retried or failed over
 *   without the caller seeing a byte.
 * - `complete`: at its terminal signal. The whole answer is held and handed over at once, so a
 *   break at any point is retried or failed over: for callers that need atomic answers.
 */
export type CommitPolicy = 'first-token' | 'complete';
export const COMMIT_POLICIES: readonly CommitPolicy[] = ['first-token', 'complete'];

/** The stream guard's defaults: when the caller gets the stream, and how long each wait may be. */
export interface StreamProfile {
  commit: CommitPolicy;
  /**
   * After commit, a cut or a stall is continued where a target declares `continuation:
   * 'prefill'`: the rest of the answer is asked for with the delivered text as a trailing
   * assistant message and spliced into the caller's stream. It changes nothing where no target
   * declares it (the declaration is the opt-in); `false` ends every such break with the in-band
   * error, declarations or not.
   */
  resume: boolean;
  /** Longest wait for a streamed answer's headers. */
  headersTimeoutMs: number;
  /** Longest time from the attempt's start to the first content token. */
  firstTokenMs: number;
  /** Longest gap between two events of a stream. */
  idleMs: number;
}

/**
 * The settings two ways of shipping the engine default differently. Everything else is each
 * primitive's own default (`CIRCUIT_BREAKER_DEFAULTS`, `BACKOFF_DEFAULTS`, …), the same in
 * every profile; a value given by the caller (or a scenario) is merged over the profile's.
 */
export interface EngineProfile {
  retryBudget: Readonly<Pick<RetryBudgetOptions, 'ratio'>>;
  throttle: Readonly<Pick<AdaptiveThrottleOptions, 'k'>>;
  breaker: Readonly<Pick<CircuitBreakerOptions, 'failureRatio' | 'throttledRatio'>>;
  /**
   * Longest wait for a non-streamed answer's headers, which come only once the whole answer
   * is written (an HTTP integration's wait; the simulator applies it to a model layer's calls).
   */
  headersTimeoutMs: number;
  stream: Readonly<StreamProfile>;
}

/**
 * The HTTP waits, chosen so that a silent provider ends well inside a 100 s call budget with
 * time left for the fallback to answer:
 * - a streamed request's headers come before any generation, so 10 s of silence means the
 *   provider is not answering (the fallback answers at ~11 s);
 * - a non-streamed answer's headers come only once the whole completion is written: 30 s is
 *   ~1500 output tokens at 50 tokens/s (raise it for longer answers, or stream them);
 * - the first content token within 20 s of the attempt's start (queueing and prompt
 *   processing of a long prompt; reasoning models that think before they speak need more);
 * - 15 s without any event (providers send keep-alive pings during long pauses) is a stall.
 * Nothing reaches the caller before the first content token, so what fails before it is
 * retried without the caller seeing a byte.
 */
const HTTP_WAITS = Object.freeze({
  headersTimeoutMs: 30_000,
  stream: Object.freeze({
    commit: 'first-token',
    resume: true,
    headersTimeoutMs: 10_000,
    firstTokenMs: 20_000,
    idleMs: 15_000,
  } satisfies StreamProfile),
});

/**
 * The engine's named profiles, the one table of what differs between them:
 *
 * - `http` — what `guardedFetch` and the undici interceptor (`stormlab/undici`) ship, and what
 *   a scenario's `engine` layers model unless told otherwise. Protect at outage without costing
 *   goodput at partial failure: with retries, a provider failing half its requests fails about
 *   half the attempts, so at a breaker ratio of 0.5 the breaker opens in a brownout and sheds
 *   calls that would have succeeded, and at K = 2 the throttle sits on its edge there. The
 *   breaker at 0.8 and the throttle at K = 3 stay out of a brownout's way and still close the
 *   door at outage (the breaker opens when nearly everything fails); a retry budget of 0.5 lets
 *   a brownout's failures be retried once while bounding an outage's retries, before the
 *   breaker opens, to 1.5 per call.
 * - `core` — the primitives' own defaults, what `new Guard()` of `stormlab/engine` starts
 *   with: budget 0.1 (Finagle's), K = 2 (the SRE book's), breaker ratios 0.5. The core has no
 *   HTTP or stream guard of its own, so its waits are the integrations' (a simulated `core`
 *   engine guards streams as the `http` one does).
 */
export const ENGINE_PROFILES = Object.freeze({
  http: Object.freeze({
    retryBudget: Object.freeze({ ratio: 0.5 }),
    throttle: Object.freeze({ k: 3 }),
    breaker: Object.freeze({ failureRatio: 0.8, throttledRatio: 0.8 }),
    ...HTTP_WAITS,
  }),
  core: Object.freeze({
    retryBudget: Object.freeze({ ratio: RETRY_BUDGET_DEFAULTS.ratio }),
    throttle: Object.freeze({ k: ADAPTIVE_THROTTLE_DEFAULTS.k }),
    breaker: Object.freeze({
      failureRatio: CIRCUIT_BREAKER_DEFAULTS.failureRatio,
      throttledRatio: CIRCUIT_BREAKER_DEFAULTS.throttledRatio,
    }),
    ...HTTP_WAITS,
  }),
} satisfies Record<string, EngineProfile>);

export type EngineProfileName = keyof typeof ENGINE_PROFILES;
export const ENGINE_PROFILE_NAMES = Object.keys(ENGINE_PROFILES) as [EngineProfileName, ...EngineProfileName[]];
/** The profile a scenario's engine layers take when they name none: the engine as `stormlab/undici` ships it. */
export const DEFAULT_ENGINE_PROFILE: EngineProfileName = 'http';
