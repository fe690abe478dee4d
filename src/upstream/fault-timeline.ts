import { OptionError } from '../engine/errors.js';
import { checkInteger, checkNumber, checkOneOf, checkPositive } from '../engine/options.js';
import type { Random } from '../engine/random.js';
import { checkTimeDist } from './check-dist.js';
import type { FaultKind, FaultPhase } from './config.js';
import { sampler } from './distribution.js';

/** Fault kinds as numbers, for the hot path. */
export const FaultCode = {
  None: 0,
  Errors: 1,
  Outage: 2,
  Reset: 3,
  Hang: 4,
  Midstream: 5,
  Quota: 6,
  Latency: 7,
  SlowFirstToken: 8,
  Stall: 9,
  Cut: 10,
  Malformed: 11,
  MissingDone: 12,
  PrefillRejected: 13,
  ContentFilter: 14,
  ContextLength: 15,
} as const;

const CODES: { readonly [K in FaultKind]: number } = {
  errors: FaultCode.Errors,
  outage: FaultCode.Outage,
  reset: FaultCode.Reset,
  hang: FaultCode.Hang,
  midstream: FaultCode.Midstream,
  quota: FaultCode.Quota,
  latency: FaultCode.Latency,
  'slow-first-token': FaultCode.SlowFirstToken,
  stall: FaultCode.Stall,
  cut: FaultCode.Cut,
  malformed: FaultCode.Malformed,
  'missing-done': FaultCode.MissingDone,
  'prefill-rejected': FaultCode.PrefillRejected,
  'content-filter': FaultCode.ContentFilter,
  'context-length': FaultCode.ContextLength,
};
const KINDS = Object.keys(CODES) as FaultKind[];

export const FAULT_DEFAULTS = {
  /** @default 1 — every request in the phase is hit. */
  rate: 1,
  /** Status of an `outage` without `status`. @default 503 */
  outageStatus: 503,
  /** Status of `errors` without `status`. @default 500 */
  errorStatus: 500,
  /** @default 1 */
  factor: 1,
  /** Tokens a `content-filter` (finish) lets through before it stops the answer. @default 0 */
  filterAfterTokens: 0,
  /** @default 'finish' */
  filterMode: 'finish' as const,
};

/** The statuses an `errors` or `outage` phase may answer with: client and server errors. */
export const ERROR_STATUS = { min: 400, max: 599 } as const;

/** What each kind needs besides the common fields (checked at load, named by path). */
const REQUIRED: Partial<Record<FaultKind, ReadonlyArray<keyof FaultPhase>>> = {
  stall: ['afterTokens'],
  cut: ['afterTokens'],
  'context-length': ['contextTokens'],
};

/**
 * Which fault hits a request to a model at a time. Phases are active on [fromMs, toMs).
 *
 * A request's fate is decided once, at arrival: the model's active phases (all but `latency`)
 * are tried in config order, each hitting with probability `rate`, and the first hit wins —
 * so an `outage` listed first masks an `errors` phase under it. `latency` phases are read at
 * service start instead: overlapping factors multiply, overlapping added times (`addMs`) add.
 * A phase with a `route` hits only requests on that route (a server's; the simulator has none).
 */
export class FaultTimeline {
  private readonly kinds: Int32Array;
  private readonly from: Float64Array;
  private readonly to: Float64Array;
  private readonly rates: Float64Array;
  private readonly factors: Float64Array;
  /** Per phase, the stream faults' parameters: tokens before the fault, a time (ttft or stall), a window. */
  private readonly afters: Float64Array;
  private readonly times: Float64Array;
  private readonly windows: Float64Array;
  private readonly rejects: Uint8Array;
  /** Per phase: its route (undefined: every route) and its added time's sampler (undefined: none). */
  private readonly routes: Array<string | undefined>;
  private readonly adds: Array<(() => number) | undefined>;
  /** Per phase: the statuses it answers with and their cumulative probabilities. */
  private readonly statuses: Int32Array[];
  private readonly cums: Float64Array[];
  /** Per model: its arrival phases and its latency phases, as phase indexes. */
  private readonly arrivals: Int32Array[];
  private readonly latencies: Int32Array[];

  /**
   * `continuing`: the models that declare `continuation: prefill`, when the timeline's models
   * are an upstream's (not a proxy's or a tool service's): a `prefill-rejected` phase hitting
   * none of them would change nothing (the others reject every prefill) and is refused.
   */
  constructor(
    faults: readonly FaultPhase[],
    models: readonly string[],
    private readonly random: Random,
    continuing?: readonly string[],
  ) {
    const n = faults.length;
    this.kinds = new Int32Array(n);
    this.from = new Float64Array(n);
    this.to = new Float64Array(n);
    this.rates = new Float64Array(n);
    this.factors = new Float64Array(n);
    this.afters = new Float64Array(n);
    this.times = new Float64Array(n);
    this.windows = new Float64Array(n);
    this.rejects = new Uint8Array(n);
    this.statuses = [];
    this.cums = [];
    this.routes = faults.map((f) => f.route);
    this.adds = faults.map(() => undefined);
    faults.forEach((f, i) => this.load(f, i, models));
    if (continuing !== undefined) faults.forEach((f, i) => checkPrefillPhase(f, i, continuing));
    const pick = (m: string, lat: boolean) =>
      Int32Array.from(
        faults.flatMap((f, i) =>
          (f.model === undefined || f.model === m) && (f.kind === 'latency') === lat ? [i] : [],
        ),
      );
    this.arrivals = models.map((m) => pick(m, false));
    this.latencies = models.map((m) => pick(m, true));
  }

  /** The phase whose fault hits a request to `model` (on `route`, when the caller has routes) arriving at `now`, or -1 (draws `rate`). */
  arrival(model: number, now: number, route?: string): number {
    const list = this.arrivals[model];
    for (let j = 0; j < list.length; j++) {
      const i = list[j];
      if (now < this.from[i] || now >= this.to[i]) continue;
      if (this.routes[i] !== undefined && this.routes[i] !== route) continue;
      if (this.rates[i] >= 1 || this.random.next() < this.rates[i]) return i;
    }
    return -1;
  }

  /** The `FaultCode` of phase `i`. */
  kind(i: number): number {
    return this.kinds[i];
  }

  /** The status an `errors` or `outage` phase answers with, drawn from its weights. */
  status(i: number): number {
    const values = this.statuses[i];
    if (values.length === 1) return values[0];
    const cum = this.cums[i];
    const u = this.random.next();
    for (let j = 0; j < values.length - 1; j++) if (u < cum[j]) return values[j];
    return values[values.length - 1];
  }

  /** Tokens a `stall`, `cut` or `content-filter` phase lets through first. */
  afterTokens(i: number): number {
    return this.afters[i];
  }

  /** The first token's time of a `slow-first-token` phase, or the length of a `stall` (Infinity: forever), ms. */
  ms(i: number): number {
    return this.times[i];
  }

  /** The context window of a `context-length` phase, tokens. */
  contextTokens(i: number): number {
    return this.windows[i];
  }

  /** Whether a `content-filter` phase answers with a 400 rather than a filtered 200. */
  rejects400(i: number): boolean {
    return this.rejects[i] === 1;
  }

  /** The product of the latency factors active for `model` (on `route`) at `now` (1 when none). */
  latencyFactor(model: number, now: number, route?: string): number {
    const list = this.latencies[model];
    let factor = 1;
    for (let j = 0; j < list.length; j++) {
      const i = list[j];
      if (now >= this.from[i] && now < this.to[i] && (this.routes[i] === undefined || this.routes[i] === route))
        factor *= this.factors[i];
    }
    return factor;
  }

  /** The time the latency phases active for `model` (on `route`) at `now` add, ms: one draw of each phase's `addMs`, summed (0 when none). */
  latencyAddMs(model: number, now: number, route?: string): number {
    const list = this.latencies[model];
    let ms = 0;
    for (let j = 0; j < list.length; j++) {
      const i = list[j];
      const add = this.adds[i];
      if (add === undefined || now < this.from[i] || now >= this.to[i]) continue;
      if (this.routes[i] === undefined || this.routes[i] === route) ms += Math.max(0, add());
    }
    return ms;
  }

  /** A draw of phase `i`'s `addMs` (a `slow-first-token`'s delay added to the first token), 0 when it has none. */
  addMs(i: number): number {
    const add = this.adds[i];
    return add === undefined ? 0 : Math.max(0, add());
  }

  private load(f: FaultPhase, i: number, models: readonly string[]): void {
    const name = `upstream.faults[${i}]`;
    this.kinds[i] = CODES[checkOneOf(`${name}.kind`, f.kind, KINDS)];
    this.from[i] = checkNumber(`${name}.fromMs`, f.fromMs, -Infinity);
    this.to[i] = checkNumber(`${name}.toMs`, f.toMs, f.fromMs);
    this.rates[i] = checkNumber(`${name}.rate`, f.rate ?? FAULT_DEFAULTS.rate, 0, 1);
    this.factors[i] = checkPositive(`${name}.factor`, f.factor ?? FAULT_DEFAULTS.factor);
    if (f.model !== undefined && !models.includes(f.model)) {
      throw new OptionError(
        `${name}.model must be one of ${models.join(', ')}, got ${JSON.stringify(f.model)}`,
        `${name}.model`,
      );
    }
    if (f.route !== undefined && (typeof f.route !== 'string' || !f.route.startsWith('/')))
      throw new OptionError(
        `${name}.route must be a path like /v1/chat/completions, got ${JSON.stringify(f.route)}`,
        `${name}.route`,
      );
    if (f.addMs !== undefined) this.adds[i] = sampler(checkTimeDist(`${name}.addMs`, f.addMs), this.random);
    if (f.kind === 'slow-first-token' && f.ttftMs === undefined && f.addMs === undefined)
      throw new OptionError(`${name}.ttftMs or ${name}.addMs is required for kind slow-first-token`, `${name}.ttftMs`);
    if (f.kind === 'latency' && f.factor === undefined && f.addMs === undefined)
      throw new OptionError(`${name}.factor or ${name}.addMs is required for kind latency`, `${name}.factor`);
    this.loadStream(f, i, name);
    const fallback = f.kind === 'outage' ? FAULT_DEFAULTS.outageStatus : FAULT_DEFAULTS.errorStatus;
    this.loadStatus(f.status ?? fallback, i, `${name}.status`);
  }

  /** The stream faults' own fields: required ones present, each in range. */
  private loadStream(f: FaultPhase, i: number, name: string): void {
    for (const key of REQUIRED[f.kind] ?? []) {
      if (f[key] === undefined)
        throw new OptionError(`${name}.${key} is required for kind ${f.kind}`, `${name}.${key}`);
    }
    if (f.ttftMs !== undefined) {
      this.times[i] = checkNumber(`${name}.ttftMs`, f.ttftMs, 0);
      if (f.ttftMs === Infinity)
        throw new OptionError(
          `${name}.ttftMs must be finite (a first token that never comes is a hang), got Infinity`,
          `${name}.ttftMs`,
        );
    }
    if (f.kind === 'stall') {
      const ms = f.stallMs ?? Infinity;
      this.times[i] = ms === Infinity ? ms : checkPositive(`${name}.stallMs`, ms);
    }
    const after = f.afterTokens ?? (f.kind === 'content-filter' ? FAULT_DEFAULTS.filterAfterTokens : 0);
    this.afters[i] = checkInteger(`${name}.afterTokens`, after, f.kind === 'stall' || f.kind === 'cut' ? 1 : 0);
    if (f.contextTokens !== undefined) this.windows[i] = checkInteger(`${name}.contextTokens`, f.contextTokens, 1);
    const mode = checkOneOf(`${name}.mode`, f.mode ?? FAULT_DEFAULTS.filterMode, ['finish', 'reject'] as const);
    this.rejects[i] = mode === 'reject' ? 1 : 0;
  }

  /** `status` as a number or as weights by status (`{ 503: 0.7, 429: 0.3 }`). */
  private loadStatus(status: number | Record<string, number>, i: number, name: string): void {
    const weights = typeof status === 'number' ? { [status]: 1 } : status;
    const keys = Object.keys(weights);
    if (typeof weights !== 'object' || weights === null || keys.length === 0) {
      throw new OptionError(`${name} must be a status or weights by status, got ${JSON.stringify(status)}`, name);
    }
    // An errors or outage phase stands for a failing upstream: a 200 (or a 3xx) would answer
    // every request it hits with an empty success, which nothing could tell from a real answer.
    const values = keys.map((k) => {
      const n = Number(k);
      if (!(Number.isInteger(n) && n >= ERROR_STATUS.min && n <= ERROR_STATUS.max))
        throw new OptionError(
          `${name} must be an error status from ${ERROR_STATUS.min} to ${ERROR_STATUS.max} (a fault answers with an error), got ${k}`,
          name,
        );
      return n;
    });
    const w = keys.map((k) => checkNumber(`${name}[${k}]`, weights[k], 0));
    const total = w.reduce((a, b) => a + b, 0);
    if (!(total > 0)) throw new OptionError(`${name} weights must add up to more than 0, got ${total}`, name);
    let sum = 0;
    this.statuses[i] = Int32Array.from(values);
    this.cums[i] = Float64Array.from(w, (x) => (sum += x / total));
  }
}

/** A `prefill-rejected` phase must hit a model that declares `continuation: prefill` (`continuing`). */
function checkPrefillPhase(f: FaultPhase, i: number, continuing: readonly string[]): void {
  if (f.kind !== 'prefill-rejected') return;
  const name = `upstream.faults[${i}]`;
  if (f.model === undefined ? continuing.length > 0 : continuing.includes(f.model)) return;
  const what = f.model === undefined ? 'no model declares' : `model ${JSON.stringify(f.model)} does not declare`;
  throw new OptionError(
    `${name}: prefill-rejected, but ${what} continuation: prefill, so it rejects every prefill already`,
    name,
  );
}
