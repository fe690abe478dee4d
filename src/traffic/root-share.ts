import { SeededRandom } from '../engine/random.js';

/** One worker's part of a run split over a fleet: share `index` (from 0) of `of`. */
export interface RootShare {
  index: number;
  of: number;
}

/**
 * Which share the n-th root arrival (or closed-loop user) of a run with this seed belongs to,
 * when the run is split `of` ways. Arrivals go in blocks of `of`: each block is dealt out in an
 * order drawn from the seed and the block's number, so every share gets one root of each block
 * (the shares differ by at most one root, at any point of the run) and which one is not tied
 * to its place in the block. The same seed and `of` give the same split, in any process.
 */
export function shareOfRoot(seed: number, of: number): (n: number) => number {
  if (of <= 1) return () => 0;
  let block = -1;
  const order = new Int32Array(of);
  return (n) => {
    const b = Math.floor(n / of);
    if (b !== block) {
      block = b;
      const r = new SeededRandom(seed).split(`share:${of}:${b}`);
      for (let i = 0; i < of; i++) order[i] = i;
      for (let i = of - 1; i > 0; i--) {
        const j = Math.floor(r.next() * (i + 1));
        const t = order[i];
        order[i] = order[j];
        order[j] = t;
      }
    }
    return order[n - b * of];
  };
}

/** Whether the n-th root (or user) is `share`'s: undefined (every root) without a share. */
export function rootFilter(seed: number, share: RootShare | undefined): ((n: number) => boolean) | undefined {
  if (share === undefined || share.of <= 1) return undefined;
  const of = shareOfRoot(seed, share.of);
  return (n) => of(n) === share.index;
}
