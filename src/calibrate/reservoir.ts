/**
 * A fixed-size uniform sample of a stream of numbers (Vitter's algorithm R), with a seeded
 * generator so the same input gives the same sample: percentiles of any number of spans in
 * constant memory. Below its capacity it holds every value, so small inputs are exact.
 */
export class Reservoir {
  private readonly a: Float64Array;
  private readonly b: Float64Array | undefined;
  /** Values seen in all. */
  count = 0;
  sum = 0;
  private state: number;

  constructor(
    readonly capacity = 4096,
    pairs = false,
    seed = 0x9e3779b9,
  ) {
    this.a = new Float64Array(capacity);
    this.b = pairs ? new Float64Array(capacity) : undefined;
    this.state = seed >>> 0;
  }

  private rand(): number {
    // xorshift32: enough to pick slots evenly, and deterministic.
    let x = this.state;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.state = x >>> 0;
    return this.state / 4294967296;
  }

  add(x: number, y = 0): void {
    this.count++;
    this.sum += x;
    let slot = this.count - 1;
    if (slot >= this.capacity) {
      slot = Math.floor(this.rand() * this.count);
      if (slot >= this.capacity) return;
    }
    this.a[slot] = x;
    if (this.b !== undefined) this.b[slot] = y;
  }

  get size(): number {
    return Math.min(this.count, this.capacity);
  }

  values(): Float64Array {
    return this.a.slice(0, this.size);
  }

  /** The second values of a pair reservoir, in the same order as `values()`. */
  seconds(): Float64Array {
    return (this.b ?? new Float64Array(0)).slice(0, this.size);
  }

  mean(): number {
    return this.count === 0 ? Number.NaN : this.sum / this.count;
  }

  /** The `q` quantile (0..1) of the sample, NaN when empty. */
  quantile(q: number): number {
    return quantileOf(this.values().sort(), q);
  }
}

/** The `q` quantile of sorted values (nearest rank), NaN when there are none. */
export function quantileOf(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}
