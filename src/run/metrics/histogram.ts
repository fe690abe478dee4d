/** Largest latency a histogram tracks: one hour. Longer values are recorded as one hour. */
export const HISTOGRAM_MAX_MS = 3_600_000;

// The layout of an HdrHistogram with lowest discernible value 1, highest trackable value
// HISTOGRAM_MAX_MS and 3 significant digits, as hdr-histogram-js builds it: sub-buckets of
// 2048 values (2 × 10³ rounded up to a power of two), bucket 0 at 1 ms resolution, each further
// bucket twice as wide as the one before, its lower half covered by the buckets below it.
/** log2 of half a bucket's sub-bucket count (1024). */
const HALF_MAGNITUDE = 10;
const HALF_COUNT = 1 << HALF_MAGNITUDE;
/** Buckets needed so that 2048 × 2^(buckets − 1) exceeds one hour. */
const BUCKETS = 12;
const LENGTH = (BUCKETS + 1) * HALF_COUNT;

/** The counts index of a value in 0 .. HISTOGRAM_MAX_MS (an integer). */
function indexOf(v: number): number {
  // The bucket: how many powers of two v is above the 2048 values bucket 0 holds (31 − clz = floor(log2 v)).
  const b = v < 2 * HALF_COUNT ? 0 : 31 - Math.clz32(v) - HALF_MAGNITUDE;
  return (b << HALF_MAGNITUDE) + (v >>> b);
}

/** The bucket of a counts index (bucket 0 holds indexes 0 .. 2047). */
function bucketOf(i: number): number {
  return i < 2 * HALF_COUNT ? 0 : (i >> HALF_MAGNITUDE) - 1;
}

/** The lowest value counted at index i. */
function lowestAt(i: number): number {
  const b = bucketOf(i);
  return b === 0 ? i : ((i & (HALF_COUNT - 1)) + HALF_COUNT) * 2 ** b;
}

/** A `LatencyHistogram` as JSON (`encode`): non-zero counts as (index gap, count) pairs, and the max. */
export interface EncodedHistogram {
  max: number;
  counts: number[];
}

/**
 * A latency histogram in integer milliseconds, 0 .. 1 h, at 3 significant digits: an
 * HdrHistogram (any value is reported within 0.1 % of what was recorded), in plain JS with the
 * same layout and the same answers as hdr-histogram-js's, which it replaces because loading
 * that package (and compiling its WebAssembly) cost a CLI run more than all its records did.
 * Fixed size, so memory stays flat however many values it takes; `record` does not allocate.
 */
export class LatencyHistogram {
  private readonly counts = new Float64Array(LENGTH);
  private total = 0;
  private maxValue = 0;

  /** Records one latency; it is rounded to a whole ms and clamped to 0 .. 1 h (NaN counts as 0). */
  record(ms: number): void {
    const v = ms > 0 ? (ms < HISTOGRAM_MAX_MS ? Math.round(ms) : HISTOGRAM_MAX_MS) : 0;
    this.counts[indexOf(v)]++;
    this.total++;
    if (v > this.maxValue) this.maxValue = v;
  }

  /**
   * The value at percentile `p` (0..100), 0 when empty: the top of the bucket holding the
   * smallest value with at least p % of the count at or below it (6000 recorded reads back as
   * 6003; p = 0 gives the bucket's bottom), capped at the max so that p99 ≤ max.
   */
  percentile(p: number): number {
    if (this.total === 0) return 0;
    const requested = Math.min(p, 100);
    const fp = (requested / 100) * this.total;
    // Rounds up, allowing for the one ulp the multiplication may be over the true count.
    const rank = Math.max(Math.ceil(fp - (fp > 0 ? 2 ** (Math.floor(Math.log2(fp)) - 52) : 0)), 1);
    const counts = this.counts;
    let seen = 0;
    for (let i = 0; i < LENGTH; i++) {
      seen += counts[i];
      if (seen >= rank) {
        const value = p === 0 ? lowestAt(i) : lowestAt(i) + 2 ** bucketOf(i) - 1;
        return Math.min(value, this.maxValue);
      }
    }
    return 0;
  }

  get count(): number {
    return this.total;
  }

  get max(): number {
    return this.maxValue;
  }

  /** The mean, each value taken at the middle of its bucket (exact below 2048 ms). */
  get mean(): number {
    if (this.total === 0) return 0;
    const counts = this.counts;
    let sum = 0;
    for (let i = 0; i < LENGTH; i++) {
      const c = counts[i];
      if (c > 0) sum += c * (lowestAt(i) + Math.floor(2 ** bucketOf(i) / 2));
    }
    return sum / this.total;
  }

  reset(): void {
    this.counts.fill(0);
    this.total = 0;
    this.maxValue = 0;
  }

  /**
   * The histogram as plain JSON, exactly: its non-zero counts as (index gap, count) pairs, and
   * its max. `LatencyHistogram.decode` gives back a histogram with every count it had, so
   * histograms recorded in other processes merge into one exactly (a fleet's workers).
   */
  encode(): EncodedHistogram {
    const counts: number[] = [];
    let last = -1;
    const c = this.counts;
    for (let i = 0; i < LENGTH; i++) {
      if (c[i] === 0) continue;
      counts.push(i - last, c[i]);
      last = i;
    }
    return { max: this.maxValue, counts };
  }

  /** A histogram from `encode`'s JSON; throws on one that is not (a wrong layout, a negative count). */
  static decode(e: EncodedHistogram): LatencyHistogram {
    const h = new LatencyHistogram();
    h.add(e);
    return h;
  }

  /** Adds the values of an encoded histogram to this one (as `merge` does). */
  add(e: EncodedHistogram): void {
    const pairs = e.counts;
    if (!Array.isArray(pairs) || pairs.length % 2 !== 0 || !(e.max >= 0 && e.max <= HISTOGRAM_MAX_MS))
      throw new Error('an encoded histogram holds (gap, count) pairs and a max within 0 .. 1 h');
    let i = -1;
    for (let k = 0; k < pairs.length; k += 2) {
      i += pairs[k];
      const n = pairs[k + 1];
      if (!Number.isInteger(pairs[k]) || pairs[k] < 1 || i >= LENGTH || !(n > 0))
        throw new Error(`an encoded histogram's pair ${k / 2} is not a count within the layout`);
      this.counts[i] += n;
      this.total += n;
    }
    if (e.max > this.maxValue) this.maxValue = e.max;
  }

  /** Adds every value of `other` to this one (`other` is left unchanged). */
  merge(other: LatencyHistogram): void {
    const a = this.counts;
    const b = other.counts;
    for (let i = 0; i < LENGTH; i++) a[i] += b[i];
    this.total += other.total;
    if (other.maxValue > this.maxValue) this.maxValue = other.maxValue;
  }
}
