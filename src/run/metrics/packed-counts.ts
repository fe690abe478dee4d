/**
 * A counter array as JSON, exactly: its length and its non-zero entries as (index gap, value)
 * pairs, so a mostly empty array (602 status slots per model) travels small.
 */
export interface PackedCounts {
  length: number;
  pairs: number[];
}

export function packCounts(a: ArrayLike<number>): PackedCounts {
  const pairs: number[] = [];
  let last = -1;
  for (let i = 0; i < a.length; i++) {
    if (a[i] === 0) continue;
    pairs.push(i - last, a[i]);
    last = i;
  }
  return { length: a.length, pairs };
}

/** How packed values combine with the ones there: summed (counters) or the larger kept (flags, gauges). */
export type Combine = 'sum' | 'max';

/** Adds (or maxes) packed counts into `into`; throws when they were packed from an array of another length. */
export function addCounts(into: Float64Array | Uint8Array | Int32Array, p: PackedCounts, how: Combine = 'sum'): void {
  if (p.length !== into.length || p.pairs.length % 2 !== 0)
    throw new Error(`packed counts of length ${p.length} do not fit an array of ${into.length}`);
  let i = -1;
  for (let k = 0; k < p.pairs.length; k += 2) {
    i += p.pairs[k];
    if (!(i >= 0 && i < into.length)) throw new Error(`packed counts point past the array (${i})`);
    const v = p.pairs[k + 1];
    if (how === 'sum') into[i] += v;
    else if (v > into[i]) into[i] = v;
  }
}
