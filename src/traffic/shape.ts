import type { Random } from '../engine/random.js';
import { sampler } from '../upstream/distribution.js';
import type { LayerConfig } from './config.js';

/** A 32-bit mix (murmur3's finaliser): turns node keys into well-spread numbers. */
export function mix32(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/** The key of child `i` of the node with key `parent`. */
export function childKey(parent: number, i: number): number {
  return mix32((parent ^ Math.imul(i + 1, 0x9e3779b1)) >>> 0);
}

/**
 * The shape of the call tree, fixed per node: the fan-out of a node is a function of its key
 * alone, so a retried parent starts the same children again, and the logical calls of a root
 * task (what the tree would make if everything succeeded first time) can be counted when it
 * arrives, whatever then happens to it.
 */
export class TreeShape {
  private readonly draws: Array<() => number>;
  private readonly fixed: number[];
  private state = 0;
  private readonly hashRandom: Random = { next: () => (this.state = mix32(this.state + 0x6d2b79f5)) / 4294967296 };

  constructor(
    private readonly layers: LayerConfig[],
    seed: number,
  ) {
    this.fixed = layers.map((l) => (typeof l.fanout === 'number' ? Math.max(1, Math.ceil(l.fanout)) : 0));
    this.draws = layers.map((l) => sampler(l.fanout, this.hashRandom));
    this.seed = seed >>> 0;
  }

  private readonly seed: number;

  /** Key of root task `n`. */
  rootKey(n: number): number {
    return mix32((this.seed ^ Math.imul(n + 1, 0x27d4eb2d)) >>> 0);
  }

  /** Children a node at `layer` with `key` starts (0 on the last layer). Values round up to at least 1. */
  fanout(layer: number, key: number): number {
    if (layer >= this.layers.length - 1) return 0;
    if (this.fixed[layer] > 0) return this.fixed[layer];
    this.state = key;
    const v = Math.ceil(this.draws[layer]());
    return Math.max(v, 1);
  }

  /** Adds the logical calls of the subtree under (layer, key), per layer, into `counts`. */
  countLogical(layer: number, key: number, counts: Float64Array): void {
    counts[layer]++;
    const n = this.fanout(layer, key);
    if (n === 0) return;
    if (this.fixed[layer] > 0 && this.allFixedBelow(layer)) {
      // Fixed fan-outs below: multiply instead of walking.
      let m = 1;
      for (let l = layer + 1; l < this.layers.length; l++) {
        m *= this.fixed[l - 1];
        counts[l] += m;
      }
      return;
    }
    for (let i = 0; i < n; i++) this.countLogical(layer + 1, childKey(key, i), counts);
  }

  private allFixedBelow(layer: number): boolean {
    for (let l = layer; l < this.layers.length - 1; l++) if (this.fixed[l] === 0) return false;
    return true;
  }
}
