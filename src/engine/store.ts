import { OptionError } from './errors.js';
import { TokenBucket, type BucketSpec, type TokenBucketLike } from './token-bucket.js';
import { WindowCounter, type WindowCounterLike, type WindowSpec } from './window-counter.js';

/**
 * Where primitives keep their state. Primitives ask for a counter or a bucket by key once, at
 * construction, and then call it synchronously on the hot path. The memory store hands out
 * local objects; a shared store (Redis) hands out objects with the same interface that sync
 * with other processes in the background, so callers never change.
 */
export interface StateStore {
  windowCounter(key: string, spec: WindowSpec): WindowCounterLike;
  tokenBucket(key: string, spec: BucketSpec): TokenBucketLike;
}

function sameSpec(a: object, b: object): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** State in this process. Two primitives asking for the same key share one object. */
export class MemoryStore implements StateStore {
  private readonly windows = new Map<string, WindowCounterLike>();
  private readonly buckets = new Map<string, TokenBucketLike>();

  windowCounter(key: string, spec: WindowSpec): WindowCounterLike {
    return this.shared(this.windows, key, spec, () => new WindowCounter(spec, key));
  }

  tokenBucket(key: string, spec: BucketSpec): TokenBucketLike {
    return this.shared(this.buckets, key, spec, () => new TokenBucket(spec, key));
  }

  private shared<T extends { spec: object }>(map: Map<string, T>, key: string, spec: object, make: () => T): T {
    const found = map.get(key);
    if (found) {
      if (!sameSpec(found.spec, spec)) {
        throw new OptionError(`store key ${JSON.stringify(key)} is already used with other settings`, 'store key');
      }
      return found;
    }
    const made = make();
    map.set(key, made);
    return made;
  }
}
