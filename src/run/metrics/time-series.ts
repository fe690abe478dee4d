import { addCounts, type Combine, type PackedCounts, packCounts } from './packed-counts.js';

/** Width of one time-series bin. */
export const BIN_MS = 1000;

/** The bin that holds time `t` (ms since the run started); negative times fall in bin 0. */
export function binOf(t: number): number {
  return t > 0 ? Math.floor(t / BIN_MS) : 0;
}

export interface TimeSeriesState {
  bins: number;
  cols: PackedCounts[];
}

/**
 * Per-second counters and gauges, one growable Float64Array per field, so memory grows with
 * the run's length in seconds (8 bytes × fields per second) and never with its request count.
 * Fields are named once and then addressed by index: `add` is a bounds check and an add.
 */
export class TimeSeries<F extends string = string> {
  readonly fields: readonly F[];
  private cols: Float64Array[];
  private cap: number;
  /** Bins in use: one past the highest bin written. */
  private used = 0;

  /** `expectedMs` sizes the arrays up front so a run of that length never grows them. */
  constructor(fields: readonly F[], expectedMs = 60_000) {
    this.fields = [...fields];
    this.cap = Math.max(16, binOf(expectedMs) + 2);
    this.cols = this.fields.map(() => new Float64Array(this.cap));
  }

  /** Number of bins written so far (the last one may be partly filled). */
  get length(): number {
    return this.used;
  }

  /** Index of a field by name; throws for a name it was not built with. */
  index(field: F): number {
    const i = this.fields.indexOf(field);
    if (i < 0) throw new Error(`unknown time-series field ${JSON.stringify(field)}`);
    return i;
  }

  /** Adds `n` to `field` in the bin holding `t`. */
  add(field: number, t: number, n = 1): void {
    const b = this.touch(binOf(t)); // before reading cols: touch may replace the arrays
    this.cols[field][b] += n;
  }

  /** Sets a gauge: the last value written in a bin wins. */
  set(field: number, t: number, value: number): void {
    const b = this.touch(binOf(t));
    this.cols[field][b] = value;
  }

  /** Keeps the largest value written in a bin (for flags such as "breaker open this second"). */
  max(field: number, t: number, value: number): void {
    const b = this.touch(binOf(t));
    const col = this.cols[field];
    if (value > col[b]) col[b] = value;
  }

  /** The value of `field` in `bin` (0 for bins not written). */
  get(field: number, bin: number): number {
    return bin >= 0 && bin < this.used ? this.cols[field][bin] : 0;
  }

  /** Sum of `field` over bins `from` (inclusive) to `to` (exclusive), clipped to the bins written. */
  sum(field: number, from: number, to: number): number {
    const col = this.cols[field];
    let s = 0;
    for (let b = Math.max(0, from); b < Math.min(to, this.used); b++) s += col[b];
    return s;
  }

  /** Bins `from` .. `to` (exclusive) of one field, zeros where nothing was written; defaults to every bin written. */
  slice(field: number, from = 0, to = this.used): number[] {
    const out = new Array<number>(Math.max(0, to - from)).fill(0);
    const col = this.cols[field];
    for (let b = Math.max(0, from); b < Math.min(to, this.used); b++) out[b - from] = col[b];
    return out;
  }

  /** Every field as a plain array over bins `from` .. `to`. */
  toJSON(from = 0, to = this.used): Record<F, number[]> {
    const out = {} as Record<F, number[]>;
    this.fields.forEach((name, i) => {
      out[name] = this.slice(i, from, to);
    });
    return out;
  }

  /** The bins written, every field, exactly, as JSON (`absorb` adds them to another series of the same fields). */
  state(): TimeSeriesState {
    return { bins: this.used, cols: this.cols.map((c) => packCounts(c.subarray(0, this.used))) };
  }

  /** Adds (or, for `max` fields, maxes) another series' bins into this one, bin by bin. */
  absorb(s: TimeSeriesState, how: (field: number) => Combine = () => 'sum'): void {
    if (s.cols.length !== this.cols.length) throw new Error('a time series of other fields');
    if (s.bins > 0) this.touch(s.bins - 1);
    s.cols.forEach((p, f) => {
      const into = new Float64Array(s.bins);
      into.set(this.cols[f].subarray(0, s.bins));
      addCounts(into, p, how(f));
      this.cols[f].set(into);
    });
  }

  /** Marks `bin` as used, growing the arrays (doubling) when it lies past their end. */
  private touch(bin: number): number {
    if (bin >= this.used) {
      if (bin >= this.cap) this.grow(bin + 1);
      this.used = bin + 1;
    }
    return bin;
  }

  private grow(min: number): void {
    this.cap = Math.max(min, this.cap * 2);
    this.cols = this.cols.map((old) => {
      const next = new Float64Array(this.cap);
      next.set(old);
      return next;
    });
  }
}
