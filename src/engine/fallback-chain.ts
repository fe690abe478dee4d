import { OptionError } from './errors.js';
import { checkNonEmptyString } from './options.js';

export interface FallbackTarget<T> {
  /** Unique within the chain, e.g. a model name. */
  name: string;
  /** What the caller uses when this target is chosen (a model id, a client, a config). */
  value: T;
  /** Whether the target can take calls at `now`, e.g. `(now) => breaker.state(now) !== 'open'`. @default always */
  available?: (now: number) => boolean;
}

/**
 * Ordered targets (primary first): the caller starts at `first(now)` and moves to
 * `next(index, now)` when a target fails with an error whose class says "try elsewhere"
 * (e.g. a context-length error → a larger-context model, or the primary's breaker opening).
 * Unavailable targets (breaker open) are skipped without a call. Any index above 0 means the
 * answer came from a fallback, which the caller reports as `degraded`.
 *
 * The chain holds no per-call state, so one instance serves every call; `first` and `next`
 * are loops over a fixed array and allocate nothing.
 */
export class FallbackChain<T> {
  readonly targets: readonly FallbackTarget<T>[];

  constructor(targets: FallbackTarget<T>[]) {
    if (!Array.isArray(targets) || targets.length === 0) {
      throw new OptionError(
        `fallbackChain.targets must be a non-empty array, got ${Array.isArray(targets) ? '[]' : String(targets)}`,
        'fallbackChain.targets',
      );
    }
    const seen = new Set<string>();
    targets.forEach((target, i) => {
      const name = checkNonEmptyString(`fallbackChain.targets[${i}].name`, target?.name);
      if (seen.has(name))
        throw new OptionError(
          `fallbackChain.targets[${i}].name must be unique, got ${JSON.stringify(name)} twice`,
          `fallbackChain.targets[${i}].name`,
        );
      if (target.available !== undefined && typeof target.available !== 'function') {
        throw new OptionError(
          `fallbackChain.targets[${i}].available must be a function, got ${typeof target.available}`,
          `fallbackChain.targets[${i}].available`,
        );
      }
      seen.add(name);
    });
    this.targets = Object.freeze(targets.map((t) => Object.freeze({ ...t })));
  }

  /** Index of the first available target, -1 if none is. */
  first(now: number): number {
    return this.next(-1, now);
  }

  /** Index of the next available target after `after`, -1 if none is. */
  next(after: number, now: number): number {
    const targets = this.targets;
    for (let i = after < -1 ? 0 : after + 1; i < targets.length; i++) {
      const available = targets[i].available;
      if (available === undefined || available(now)) return i;
    }
    return -1;
  }

  /** Whether the answer from target `index` is a fallback's (anything but the primary). */
  isDegraded(index: number): boolean {
    return index > 0;
  }
}
