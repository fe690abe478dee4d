import type { EngineSeries, SeriesResult } from './result.js';
import { round6 } from './round.js';
import { addCounts, type PackedCounts, packCounts } from './packed-counts.js';
import { BIN_MS, TimeSeries, type TimeSeriesState } from './time-series.js';
import { STATUS_RESET, STATUS_TIMEOUT } from './upstream-counters.js';

const FIELDS = [
  'offered',
  'ok',
  'shed',
  'upstreamAttempts',
  'leafCalls',
  'status429',
  'status5xx',
  'timeouts',
  'faultActive',
] as const;
type Field = (typeof FIELDS)[number];
const [OFFERED, OK, SHED, UPSTREAM, LEAF, S429, S5XX, TIMEOUTS, FAULT] = FIELDS.map((_, i) => i);
/** Engine gauges per layer, flat: layer * GAUGES + gauge. */
const DROP = 0;
const BALANCE = 1;
const BREAKER = 2;
const REPLICAS_OPEN = 3;
const GAUGES = 4;

/** An engine layer's state, sampled by the driver once per second. */
export interface EngineSample {
  dropProbability: number;
  budgetBalance: number;
  breakerOpen: boolean;
  /** A layer run as several replicas: how many (absent for one). */
  replicas?: number;
  /** How many of those replicas had a breaker open. */
  replicasOpen?: number;
}

export interface RunSeriesState {
  counters: TimeSeriesState;
  gauges: TimeSeriesState;
  sampled: PackedCounts;
  replicas: PackedCounts;
}

/**
 * A run's per-second series: counters the hot path adds to (one bin index and one add each)
 * and the engine gauges sampled once per second, only reported for layers that sampled them.
 */
export class RunSeries {
  private readonly layers: readonly string[];
  private readonly counters: TimeSeries<Field>;
  private readonly gauges: TimeSeries;
  private readonly sampled: Uint8Array;
  /** Replicas per layer, from the samples; 0 for a layer sampled without (one replica). */
  private readonly replicas: Int32Array;

  constructor(layers: readonly string[], expectedMs: number) {
    this.layers = layers;
    this.counters = new TimeSeries(FIELDS, expectedMs);
    this.gauges = new TimeSeries(
      layers.flatMap((_, i) => [`${i}.drop`, `${i}.balance`, `${i}.breaker`, `${i}.replicasOpen`]),
      expectedMs,
    );
    this.sampled = new Uint8Array(layers.length);
    this.replicas = new Int32Array(layers.length);
  }

  /** Bins written so far. */
  get length(): number {
    return Math.max(this.counters.length, this.gauges.length);
  }

  offered(t: number): void {
    this.counters.add(OFFERED, t, 1);
  }

  ok(t: number): void {
    this.counters.add(OK, t, 1);
  }

  shed(t: number): void {
    this.counters.add(SHED, t, 1);
  }

  upstreamAttempt(t: number): void {
    this.counters.add(UPSTREAM, t, 1);
  }

  leafCalls(t: number, n: number): void {
    this.counters.add(LEAF, t, n);
  }

  response(status: number, t: number): void {
    if (status === 429) this.counters.add(S429, t, 1);
    else if (status >= 500 && status <= 599) this.counters.add(S5XX, t, 1);
    else if (status === STATUS_TIMEOUT || status === STATUS_RESET) this.counters.add(TIMEOUTS, t, 1);
  }

  fault(t: number, active: boolean): void {
    this.counters.max(FAULT, t, active ? 1 : 0);
  }

  engine(layer: number, t: number, s: EngineSample): void {
    this.sampled[layer] = 1;
    const g = layer * GAUGES;
    this.gauges.set(g + DROP, t, finite(s.dropProbability));
    this.gauges.set(g + BALANCE, t, finite(s.budgetBalance));
    this.gauges.max(g + BREAKER, t, s.breakerOpen ? 1 : 0);
    if (s.replicas !== undefined) {
      this.replicas[layer] = s.replicas;
      this.gauges.max(g + REPLICAS_OPEN, t, s.replicasOpen ?? 0);
    }
  }

  /** Every bin, exactly, as JSON (`absorb` merges it into another run's series). */
  state(): RunSeriesState {
    return {
      counters: this.counters.state(),
      gauges: this.gauges.state(),
      sampled: packCounts(this.sampled),
      replicas: packCounts(this.replicas),
    };
  }

  /**
   * Merges another run's series of the same layers (a fleet worker's, on the same timeline):
   * counters add up, the fault flag and every engine gauge keep the larger value of the two in
   * each second (the most any worker's engine dropped, the most budget one had, a breaker
   * open anywhere).
   */
  absorb(s: RunSeriesState): void {
    this.counters.absorb(s.counters, (f) => (f === FAULT ? 'max' : 'sum'));
    this.gauges.absorb(s.gauges, () => 'max');
    addCounts(this.sampled, s.sampled, 'max');
    addCounts(this.replicas, s.replicas, 'max');
  }

  /** Upstream attempts and logical leaf calls, each summed over bins `from` .. `to`. */
  upstreamAndLeaf(from: number, to: number): [number, number] {
    return [this.counters.sum(UPSTREAM, from, to), this.counters.sum(LEAF, from, to)];
  }

  /** Goodput and fault flags per bin, for the recovery time. */
  goodputAndFaults(bins: number): [number[], number[]] {
    return [this.counters.slice(OK, 0, bins), this.counters.slice(FAULT, 0, bins)];
  }

  /** Bins `from` .. `to` as plain arrays (gauges rounded to 6 significant digits). */
  result(from: number, to: number): SeriesResult {
    const col = (field: number): number[] => this.counters.slice(field, from, to);
    const gauge = (field: number): number[] => this.gauges.slice(field, from, to).map(round6);
    const engine = this.layers.flatMap((layer, i): EngineSeries[] => {
      if (!this.sampled[i]) return [];
      const g = i * GAUGES;
      const e: EngineSeries = {
        layer,
        dropProbability: gauge(g + DROP),
        budgetBalance: gauge(g + BALANCE),
        breakerOpen: gauge(g + BREAKER),
      };
      // Only for replicated layers, so a result without replicas is what it always was.
      return [this.replicas[i] > 0 ? { ...e, replicas: this.replicas[i], replicasOpen: gauge(g + REPLICAS_OPEN) } : e];
    });
    return {
      binMs: BIN_MS,
      fromBin: from,
      offered: col(OFFERED),
      ok: col(OK),
      shed: col(SHED),
      upstreamAttempts: col(UPSTREAM),
      leafCalls: col(LEAF),
      status429: col(S429),
      status5xx: col(S5XX),
      timeouts: col(TIMEOUTS),
      faultActive: col(FAULT),
      engine,
    };
  }
}

/** Non-finite gauges (an unlimited budget's Infinity) are stored as 0: JSON has no Infinity. */
function finite(x: number): number {
  return Number.isFinite(x) ? x : 0;
}
