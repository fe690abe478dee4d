import { OptionError } from '../engine/errors.js';
import { checkInteger, checkNumber, checkOneOf, checkPositive } from '../engine/options.js';
import type { Random } from '../engine/random.js';
import type { FaultKind, FaultPhase } from './config.js';

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
} as const;

const CODES: { readonly [K in FaultKind]: number } = {
  errors: FaultCode.Errors,
  outage: FaultCode.Outage,
  reset: FaultCode.Reset,
  hang: FaultCode.Hang,
  midstream: FaultCode.Midstream,
  quota: FaultCode.Quota,
  latency: FaultCode.Latency,
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
};

/**
 * Which fault hits a request to a model at a time. Phases are active on [fromMs, toMs).
 *
 * A request's fate is decided once, at arrival: the model's active phases (all but `latency`)
 * are tried in config order, each hitting with probability `rate`, and the first hit wins —
 * so an `outage` listed first masks an `errors` phase under it. `latency` phases are read at
 * service start instead, and overlapping ones multiply.
 */
export class FaultTimeline {
  private readonly kinds: Int32Array;
  private readonly from: Float64Array;
  private readonly to: Float64Array;
  private readonly rates: Float64Array;
  private readonly factors: Float64Array;
  /** Per phase: the statuses it answers with and their cumulative probabilities. */
  private readonly statuses: Int32Array[];
  private readonly cums: Float64Array[];
  /** Per model: its arrival phases and its latency phases, as phase indexes. */
  private readonly arrivals: Int32Array[];
  private readonly latencies: Int32Array[];

  constructor(
    faults: readonly FaultPhase[],
    models: readonly string[],
    private readonly random: Random,
  ) {
    const n = faults.length;
    this.kinds = new Int32Array(n);
    this.from = new Float64Array(n);
    this.to = new Float64Array(n);
    this.rates = new Float64Array(n);
    this.factors = new Float64Array(n);
    this.statuses = [];
    this.cums = [];
    faults.forEach((f, i) => this.load(f, i, models));
    const pick = (m: string, lat: boolean) =>
      Int32Array.from(
        faults.flatMap((f, i) =>
          (f.model === undefined || f.model === m) && (f.kind === 'latency') === lat ? [i] : [],
        ),
      );
    this.arrivals = models.map((m) => pick(m, false));
    this.latencies = models.map((m) => pick(m, true));
  }

  /** The phase whose fault hits a request to `model` arriving at `now`, or -1 (draws `rate`). */
  arrival(model: number, now: number): number {
    const list = this.arrivals[model];
    for (let j = 0; j < list.length; j++) {
      const i = list[j];
      if (now < this.from[i] || now >= this.to[i]) continue;
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

  /** The product of the latency factors active for `model` at `now` (1 when none). */
  latencyFactor(model: number, now: number): number {
    const list = this.latencies[model];
    let factor = 1;
    for (let j = 0; j < list.length; j++) {
      const i = list[j];
      if (now >= this.from[i] && now < this.to[i]) factor *= this.factors[i];
    }
    return factor;
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
    const fallback = f.kind === 'outage' ? FAULT_DEFAULTS.outageStatus : FAULT_DEFAULTS.errorStatus;
    this.loadStatus(f.status ?? fallback, i, `${name}.status`);
  }

  /** `status` as a number or as weights by status (`{ 503: 0.7, 429: 0.3 }`). */
  private loadStatus(status: number | Record<string, number>, i: number, name: string): void {
    const weights = typeof status === 'number' ? { [status]: 1 } : status;
    const keys = Object.keys(weights);
    if (typeof weights !== 'object' || weights === null || keys.length === 0) {
      throw new OptionError(`${name} must be a status or weights by status, got ${JSON.stringify(status)}`, name);
    }
    const values = keys.map((k) => checkInteger(`${name} key`, Number(k), 100, 599));
    const w = keys.map((k) => checkNumber(`${name}[${k}]`, weights[k], 0));
    const total = w.reduce((a, b) => a + b, 0);
    if (!(total > 0)) throw new OptionError(`${name} weights must add up to more than 0, got ${total}`, name);
    let sum = 0;
    this.statuses[i] = Int32Array.from(values);
    this.cums[i] = Float64Array.from(w, (x) => (sum += x / total));
  }
}
