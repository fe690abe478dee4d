import type { AdaptiveThrottleOptions } from '../engine/adaptive-throttle.js';
import type { CircuitBreakerOptions } from '../engine/circuit-breaker.js';
import { OptionError } from '../engine/errors.js';
import type { RetryBudgetOptions } from '../engine/retry-budget.js';
import { checkNumber, withDefaults } from '../engine/options.js';
import { Guard } from '../engine/guard.js';
import type { GuardOptions } from '../engine/guard-options.js';
import type { StreamWaits } from '../engine/stream-watch.js';
import type { Target } from '../engine/target.js';
import type { TokenEstimator } from '../engine/token-estimator.js';
import { systemClock } from '../platform/system-clock.js';
import { systemRandom } from '../platform/system-random.js';
import { HTTP_DEFAULTS } from './http-defaults.js';
import { COMMIT_POLICIES, type CommitPolicy } from './stream-gate.js';
import type { HttpTarget, HttpTargetSpec } from './target-request.js';

/** What `keys` sees of a request: enough to pick a tenant or a model bucket. */
export interface HttpRequestInfo {
  method: string;
  /** The request's own URL, before any fallback rewrite. */
  url: string;
  /** A request header (pass the name in lower case), or undefined. */
  header(name: string): string | undefined;
  /** The parsed JSON body, when the body is JSON the integration could read; otherwise undefined. */
  json: unknown;
}

/**
 * Options of the HTTP integrations: a `Guard`'s options with the real clock and OS randomness
 * as defaults, plus how to read requests.
 */
export interface EngineHttpOptions extends Omit<GuardOptions, 'clock' | 'random'> {
  /** @default systemClock */
  clock?: GuardOptions['clock'];
  /** @default systemRandom() */
  random?: GuardOptions['random'];
  /**
   * The fallback chain: origins (`'https://a.example'`), models (`{ name: 'mini', model:
   * 'gpt-4o-mini' }`) or both (`{ name: 'b', origin: 'https://b.example', model: 'claude-x',
   * rewrite }`). A request goes to the first available target: its origin rewritten (path and
   * query kept), its JSON body's `model` rewritten, then the target's `rewrite`; each target has
   * its own breaker and throttle. When some targets name an origin, only requests to those
   * origins are guarded (others pass through); otherwise every request is. Without `targets`,
   * every request is guarded as one target named `default` and keeps its own origin and model.
   */
  targets?: HttpTarget[];
  /** Retry budget shared by the requests; `false` turns it off. Merged over `HTTP_DEFAULTS.retryBudget` (ratio 0.5). */
  retryBudget?: GuardOptions['retryBudget'];
  /** SRE adaptive throttle, one per target; `false` turns it off. Merged over `HTTP_DEFAULTS.throttle` (K = 3). */
  throttle?: GuardOptions['throttle'];
  /** Circuit breaker, one per target; `false` turns it off. Merged over `HTTP_DEFAULTS.breaker` (ratios 0.8). */
  breaker?: GuardOptions['breaker'];
  /** Counts tokens of the request's text for the reservation. @default charsPerToken(3) */
  estimator?: TokenEstimator;
  /**
   * Limiter bucket keys for a request, e.g. `(r) => ({ tenant: r.header('x-tenant') ?? 'anon' })`.
   * `model` is filled from the JSON body's `model` unless this returns one.
   */
  keys?: (req: HttpRequestInfo) => Record<string, string>;
  /**
   * A request body that is a stream is read into memory (so that it can be sent again) up to
   * this many bytes; a larger one goes out unguarded, as it cannot be replayed.
   * @default 4 MiB
   */
  maxBufferedRequestBytes?: number;
  /**
   * Longest wait for a non-streamed answer's headers, which come only once the whole answer is
   * written. A timeout is a `timeout`: it falls back when there is a next target.
   * @default HTTP_DEFAULTS.headersTimeoutMs (30 s)
   */
  headersTimeoutMs?: number;
  /** The stream guard for server-sent event answers; `false` passes streams through unguarded. */
  stream?: StreamGuardOptions | false;
  /**
   * A local refusal (breaker, throttle, budget, limits, deadline) answers with a synthetic 429
   * or 503 (`retry-after-ms`, `x-should-retry: false`, `x-stormlab-shed`, the reason in the
   * provider's error shape) that SDKs raise as their own APIError without retrying; `false`
   * fails the request with the `ShedError` instead (SDKs then see a connection error, which
   * they retry).
   * @default true
   */
  shedAnswers?: boolean;
}

/** How streamed answers (OpenAI chat completions, Anthropic messages, the Responses API) are guarded. */
export interface StreamGuardOptions {
  /** When the caller gets the stream: at its first content token, or whole at its end. @default HTTP_DEFAULTS.stream.commit ('first-token') */
  commit?: CommitPolicy;
  /**
   * After commit, ask a target that declares `continuation: 'prefill'` for the rest of a cut or
   * stalled text answer (chat completions, messages) and splice it into the caller's stream;
   * `false`: such a break ends the caller's stream with an in-band error, as when no target
   * declares it. @default HTTP_DEFAULTS.stream.resume (true)
   */
  resume?: boolean;
  /** Longest wait for a streamed answer's headers. @default HTTP_DEFAULTS.stream.headersTimeoutMs (10 s) */
  headersTimeoutMs?: number;
  /** Longest time from the attempt's start to the first content token (a stall: `stream_stall`). @default HTTP_DEFAULTS.stream.firstTokenMs (20 s) */
  firstTokenMs?: number;
  /** Longest gap between two events of a stream (a stall: `stream_stall`). @default HTTP_DEFAULTS.stream.idleMs (15 s) */
  idleMs?: number;
}

export type ResolvedStreamOptions = Required<StreamGuardOptions>;

/** The parts the fetch wrapper and the interceptor share. */
export interface HttpGuard {
  readonly guard: Guard;
  readonly estimator: TokenEstimator | undefined;
  /** Normalised target origins: only requests to these are guarded; undefined guards every request. */
  readonly origins: ReadonlySet<string> | undefined;
  readonly keys: EngineHttpOptions['keys'];
  readonly maxBufferedRequestBytes: number;
  readonly headersTimeoutMs: number;
  /** Undefined when streams pass through unguarded. */
  readonly stream: ResolvedStreamOptions | undefined;
  /** A local refusal answers with a synthetic 429/503 (`shedAnswer`) rather than failing the request. */
  readonly shedAnswers: boolean;
}

const DEFAULT_MAX_BUFFERED = 4 * 1024 * 1024;

/**
 * The waits of one attempt to `target`: a guarded stream's are the stream guard's limits with
 * the target's own over them (`TargetSpec.stream`: a reasoning model's long first-token wait);
 * a request that does not stream has the header wait (`headersTimeoutMs`), and the idle gap
 * should its answer be an event stream after all.
 */
export function attemptWaits(h: HttpGuard, target: Target | undefined, guardedStream: boolean): StreamWaits {
  const sg = h.stream;
  const own = target?.stream;
  // An event stream the request did not ask for is still watched for stalls once it streams.
  if (!guardedStream || sg === undefined)
    return {
      headersMs: h.headersTimeoutMs,
      firstTokenMs: Infinity,
      idleMs: sg === undefined ? Infinity : (own?.idleMs ?? sg.idleMs),
    };
  return {
    headersMs: own?.headersTimeoutMs ?? sg.headersTimeoutMs,
    firstTokenMs: own?.firstTokenMs ?? sg.firstTokenMs,
    idleMs: own?.idleMs ?? sg.idleMs,
  };
}

/** Builds the one `Guard` behind an integration and checks the HTTP-only options. */
export function createHttpGuard(options: EngineHttpOptions = {}, resumes = true): HttpGuard {
  if (options.targets !== undefined && !Array.isArray(options.targets))
    throw new OptionError(`targets must be an array, got ${JSON.stringify(options.targets)}`, 'targets');
  const targets = options.targets?.map((t, i) => toTarget(t, i, resumes));
  const origins = targets?.flatMap((t) => (t.origin === undefined ? [] : [t.origin]));
  const guard = new Guard({
    ...options,
    clock: options.clock ?? systemClock,
    random: options.random ?? systemRandom(),
    targets,
    // withDefaults: an option given as undefined keeps the HTTP default, as if left out.
    breaker:
      options.breaker === false
        ? false
        : withDefaults<Partial<CircuitBreakerOptions>>(HTTP_DEFAULTS.breaker, options.breaker),
    throttle:
      options.throttle === false
        ? false
        : withDefaults<Partial<AdaptiveThrottleOptions>>(HTTP_DEFAULTS.throttle, options.throttle),
    retryBudget:
      options.retryBudget === false
        ? false
        : withDefaults<Partial<RetryBudgetOptions>>(HTTP_DEFAULTS.retryBudget, options.retryBudget),
  });
  const max = options.maxBufferedRequestBytes ?? DEFAULT_MAX_BUFFERED;
  if (!(max >= 0 && max < Infinity))
    throw new OptionError(
      `maxBufferedRequestBytes must be a finite number >= 0, got ${String(max)}`,
      'maxBufferedRequestBytes',
      { value: max },
    );
  if (options.keys !== undefined && typeof options.keys !== 'function')
    throw new OptionError(`keys must be a function, got ${typeof options.keys}`, 'keys');
  const headersTimeoutMs = options.headersTimeoutMs ?? HTTP_DEFAULTS.headersTimeoutMs;
  checkNumber('headersTimeoutMs', headersTimeoutMs, 0, Infinity, { minExclusive: true });
  return {
    guard,
    estimator: options.estimator,
    origins: origins === undefined || origins.length === 0 ? undefined : new Set(origins),
    keys: options.keys,
    maxBufferedRequestBytes: max,
    headersTimeoutMs,
    stream: resolveStream(options.stream),
    shedAnswers: options.shedAnswers !== false,
  };
}

function resolveStream(o: StreamGuardOptions | false | undefined): ResolvedStreamOptions | undefined {
  if (o === false) return undefined;
  if (o !== undefined && (o === null || typeof o !== 'object'))
    throw new OptionError(`stream must be an object or false, got ${JSON.stringify(o)}`, 'stream');
  const r = {
    commit: o?.commit ?? HTTP_DEFAULTS.stream.commit,
    resume: o?.resume ?? HTTP_DEFAULTS.stream.resume,
    headersTimeoutMs: o?.headersTimeoutMs ?? HTTP_DEFAULTS.stream.headersTimeoutMs,
    firstTokenMs: o?.firstTokenMs ?? HTTP_DEFAULTS.stream.firstTokenMs,
    idleMs: o?.idleMs ?? HTTP_DEFAULTS.stream.idleMs,
  };
  if (!COMMIT_POLICIES.includes(r.commit))
    throw new OptionError(
      `stream.commit must be one of ${COMMIT_POLICIES.join(', ')}, got ${JSON.stringify(r.commit)}`,
      'stream.commit',
    );
  if (typeof r.resume !== 'boolean')
    throw new OptionError(`stream.resume must be true or false, got ${JSON.stringify(r.resume)}`, 'stream.resume');
  checkNumber('stream.headersTimeoutMs', r.headersTimeoutMs, 0, Infinity, { minExclusive: true });
  checkNumber('stream.firstTokenMs', r.firstTokenMs, 0, Infinity, { minExclusive: true });
  checkNumber('stream.idleMs', r.idleMs, 0, Infinity, { minExclusive: true });
  return r;
}

/** A string target is an origin; an object's `origin`, when given, is normalised as one. */
/** `resumes`: the integration continues broken streams; one that does not refuses a target's `continuation`. */
function toTarget(target: HttpTarget, i: number, resumes: boolean): HttpTargetSpec {
  if (typeof target === 'string') {
    const origin = toOrigin(target, `targets[${i}]`);
    return { name: origin, origin };
  }
  if (target === null || typeof target !== 'object')
    throw new OptionError(
      `targets[${i}] must be an origin or a target like { name, model }, got ${JSON.stringify(target)}`,
      `targets[${i}]`,
    );
  if (target.continuation !== undefined && !resumes)
    throw new OptionError(
      `targets[${i}].continuation: the undici interceptor does not resume streams yet (guardedFetch does)`,
      `targets[${i}].continuation`,
    );
  if (target.origin === undefined) return target;
  return { ...target, origin: toOrigin(target.origin, `targets[${i}].origin`) };
}

/** `https://api.example.com/` → `https://api.example.com`; a path, query or non-URL is refused. */
function toOrigin(target: unknown, at: string): string {
  let url: URL;
  try {
    url = new URL(String(target));
  } catch {
    throw new OptionError(`${at} must be an origin like https://api.example.com, got ${JSON.stringify(target)}`, at);
  }
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '' || url.origin === 'null') {
    throw new OptionError(`${at} must be an origin (scheme://host[:port], no path), got ${JSON.stringify(target)}`, at);
  }
  return url.origin;
}

/** The origin of `url` if it is one of the targets, else undefined (not guarded). */
export function targetOrigin(h: HttpGuard, url: string | URL): string | undefined {
  if (h.origins === undefined) return undefined;
  let origin: string;
  if (typeof url === 'string' && h.origins.has(url)) return url;
  try {
    origin = new URL(url).origin;
  } catch {
    return undefined;
  }
  return h.origins.has(origin) ? origin : undefined;
}
