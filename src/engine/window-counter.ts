import { checkInteger, checkPositive } from './options.js';

export interface WindowSpec {
  /** Length of the window in milliseconds. */
  windowMs: number;
  /** How many buckets the window is cut into; the window slides one bucket at a time. */
  buckets: number;
  /** How many counters each bucket holds (e.g. requests and accepts). */
  fields: number;
}

/** What a store hands out for a sliding window: counters the primitives add to and read. */
export interface WindowCounterLike {
  readonly spec: WindowSpec;
  add(field: number, n: number, now: number): void;
  total(field: number, now: number): number;
  /** Until when (exclusive) nothing leaves the window: the end of the bucket holding `now`. */
  stableUntil(now: number): number;
}

/**
 * Counters over a sliding window cut into equal buckets, stored flat in one typed array.
 * The window at time `now` is the current bucket plus the `buckets - 1` before it, so it
 * covers between `windowMs - bucketMs` and `windowMs` of history. Running totals make every
 * read O(1); expiring buckets are subtracted as the head moves, never re-summed.
 */
export class WindowCounter implements WindowCounterLike {
  readonly spec: WindowSpec;
  private readonly bucketMs: number;
  private readonly nb: number;
  private readonly nf: number;
  private readonly data: Float64Array;
  private readonly totals: Float64Array;
  private head = 0;
  /** Start time of the head bucket, aligned to the bucket grid; -Infinity before first use. */
  private headStart = -Infinity;

  constructor(spec: WindowSpec, name = 'window') {
    checkPositive(`${name}.windowMs`, spec.windowMs);
    checkInteger(`${name}.buckets`, spec.buckets, 1, 100_000);
    checkInteger(`${name}.fields`, spec.fields, 1, 64);
    this.spec = { ...spec };
    this.nb = spec.buckets;
    this.nf = spec.fields;
    this.bucketMs = spec.windowMs / spec.buckets;
    this.data = new Float64Array(this.nb * this.nf);
    this.totals = new Float64Array(this.nf);
  }

  add(field: number, n: number, now: number): void {
    if (now >= this.headStart + this.bucketMs) this.slide(now);
    this.data[this.head * this.nf + field] += n;
    this.totals[field] += n;
  }

  total(field: number, now: number): number {
    if (now >= this.headStart + this.bucketMs) this.slide(now);
    return this.totals[field];
  }

  stableUntil(now: number): number {
    if (now >= this.headStart + this.bucketMs) this.slide(now);
    return this.headStart + this.bucketMs;
  }

  /** Moves the head to the bucket that holds `now`, forgetting the buckets it passes. */
  private slide(now: number): void {
    const steps = Math.floor((now - this.headStart) / this.bucketMs);
    if (!(steps < this.nb)) {
      this.data.fill(0);
      this.totals.fill(0);
      this.headStart = Math.floor(now / this.bucketMs) * this.bucketMs;
      return;
    }
    for (let s = 0; s < steps; s++) {
      this.head = this.head + 1 === this.nb ? 0 : this.head + 1;
      const base = this.head * this.nf;
      for (let f = 0; f < this.nf; f++) {
        this.totals[f] -= this.data[base + f];
        this.data[base + f] = 0;
      }
    }
    this.headStart += steps * this.bucketMs;
  }
}
