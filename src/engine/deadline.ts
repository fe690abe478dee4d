import { checkNumber } from './options.js';
import { OptionError } from './errors.js';

/**
 * An absolute point on the clock's timeline by which a task must be done. It propagates down
 * the call tree: each stage takes a child deadline (a fixed budget or a share of what remains)
 * that never outlives its parent, and every retry and wait spends from the same `at`.
 * Immutable; `Deadline.none()` (at = Infinity) is a shared instance.
 */
export class Deadline {
  private static readonly NONE = new Deadline(Infinity);

  readonly at: number;

  constructor(at: number) {
    if (typeof at !== 'number' || Number.isNaN(at))
      throw new OptionError(`deadline.at must be a number, got ${String(at)}`, 'deadline.at', { value: at });
    this.at = at;
  }

  /** `ms` from `now`. */
  static after(ms: number, now: number): Deadline {
    checkNumber('deadline.ms', ms, 0);
    return new Deadline(now + ms);
  }

  static none(): Deadline {
    return Deadline.NONE;
  }

  /** Milliseconds left, never negative (Infinity for none). */
  remaining(now: number): number {
    const left = this.at - now;
    return Math.max(left, 0);
  }

  expired(now: number): boolean {
    return now >= this.at;
  }

  /** An attempt is not started when less than `minRemainingMs` is left: it could not finish. */
  canStart(now: number, minRemainingMs: number): boolean {
    return now < this.at && this.at - now >= minRemainingMs;
  }

  /** A stage budget: min(this.at, now + budgetMs). */
  child(budgetMs: number, now: number): Deadline {
    checkNumber('deadline.budgetMs', budgetMs, 0);
    const at = now + budgetMs;
    return at < this.at ? new Deadline(at) : this;
  }

  /**
   * A stage gets `share` ∈ (0, 1] of what remains: now + share · remaining(now), capped at
   * `this.at` (an expired deadline has nothing to share; the cap keeps the child from ending
   * after its parent).
   */
  fraction(share: number, now: number): Deadline {
    checkNumber('deadline.share', share, 0, 1, { minExclusive: true });
    if (this.at === Infinity) return this;
    const at = now + share * this.remaining(now);
    return at < this.at ? new Deadline(at) : this;
  }
}
