import { checkInteger, checkPositive } from './options.js';

export interface WindowSpec {
  /** Length of the window in milliseconds. */
  windowMs: number;
  /** How many buckets the window is cut into; the window slides one bucket at a time. */
  buckets: number;
  /** How many counters each bucket holds (e.g. requests and accepts). */
  fields: number;
}

/** Checks a window's settings, naming the bad one (`retry-budget.buckets must be …`); returns a copy. */
export function checkWindowSpec(spec: WindowSpec, name: string): WindowSpec {
  checkPositive(`${name}.windowMs`, spec.windowMs);
  checkInteger(`${name}.buckets`, spec.buckets, 1, 100_000);
  checkInteger(`${name}.fields`, spec.fields, 1, 64);
  return { ...spec };
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
  /**
   * One flat array, so every access loads a single backing store: the running totals in
   * `[0, nf)`, then bucket b's fields at `(b + 1) * nf`.
   */
  private readonly cells: Float64Array;
  private head = 0;
  /** Index in `cells` of the head bucket's first field: `(head + 1) * nf`. */
  private headBase: number;
  /** Start time of the head bucket, aligned to the bucket grid; -Infinity before first use. */
  private headStart = -Infinity;
  /** `headStart + bucketMs`, kept so the per-call check is one load and one compare. */
  private headEnd = -Infinity;

  constructor(spec: WindowSpec, name = 'window') {
    this.spec = checkWindowSpec(spec, name);
    this.nb = spec.buckets;
    this.nf = spec.fields;
    this.bucketMs = spec.windowMs / spec.buckets;
    this.cells = new Float64Array((this.nb + 1) * this.nf);
    this.headBase = this.nf;
  }

  add(field: number, n: number, now: number): void {
    if (now >= this.headEnd) this.slide(now);
    const c = this.cells;
    c[this.headBase + field] += n;
    c[field] += n;
  }

  total(field: number, now: number): number {
    if (now >= this.headEnd) this.slide(now);
    return this.cells[field];
  }

  stableUntil(now: number): number {
    if (now >= this.headEnd) this.slide(now);
    return this.headEnd;
  }

  /** Moves the head to the bucket that holds `now`, forgetting the buckets it passes. */
  private slide(now: number): void {
    const c = this.cells;
    const nf = this.nf;
    const steps = Math.floor((now - this.headStart) / this.bucketMs);
    if (!(steps < this.nb)) {
      c.fill(0);
      this.headStart = Math.floor(now / this.bucketMs) * this.bucketMs;
    } else {
      for (let s = 0; s < steps; s++) {
        this.head = this.head + 1 === this.nb ? 0 : this.head + 1;
        const base = (this.head + 1) * nf;
        for (let f = 0; f < nf; f++) {
          c[f] -= c[base + f];
          c[base + f] = 0;
        }
      }
      this.headStart += steps * this.bucketMs;
    }
    this.headBase = (this.head + 1) * nf;
    this.headEnd = this.headStart + this.bucketMs;
  }
}
