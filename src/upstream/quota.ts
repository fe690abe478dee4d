import { checkPositive } from '../engine/options.js';

/** What the rate-limit headers need to know about one quota. */
export interface QuotaView {
  readonly limit: number;
  /** What is left in the window at `now` (never negative). */
  remaining(now: number): number;
  /** Ms until the window is empty again (back to its initial state), 0 when it is. */
  resetMs(now: number): number;
}

/**
 * A provider quota over a sliding window (60 s by default, like OpenAI's RPM and TPM): at any
 * time, the amounts taken in the last `windowMs` must not exceed `limit`.
 *
 * The window is exact, not bucketed: a ring of (time, amount) entries, oldest first, with a
 * running total. An entry taken at t frees its amount at t + windowMs, so a refused request
 * knows exactly when it would fit: walk the oldest entries until they free enough,
 *
 *   wait = t_k + windowMs − now,  k the first entry with Σ_{i≤k} amount_i ≥ used + amount − limit,
 *
 * and re-trying at now + wait succeeds. Entries expire as time moves (amortised O(1)).
 *
 * Takes within the same millisecond share one entry stamped with the latest of them, so the
 * ring holds at most `windowMs` entries however high the rate (a simulator at 10⁶ requests/s
 * would otherwise keep 6·10⁷). The cost is conservative: a take may count up to 1 ms longer
 * than its own time says, never shorter, and the wait stays exact for the entries kept.
 */
export class Quota implements QuotaView {
  readonly limit: number;
  readonly windowMs: number;
  private times = new Float64Array(16);
  private amounts = new Float64Array(16);
  private head = 0;
  private len = 0;
  private total = 0;

  constructor(limit: number, windowMs = 60_000, name = 'quota') {
    this.limit = checkPositive(`${name}.limit`, limit);
    this.windowMs = checkPositive(`${name}.windowMs`, windowMs);
  }

  /** The amount taken in the window ending at `now`. */
  used(now: number): number {
    this.expire(now);
    return this.total;
  }

  remaining(now: number): number {
    this.expire(now);
    return Math.max(0, this.limit - this.total);
  }

  resetMs(now: number): number {
    this.expire(now);
    if (this.len === 0) return 0;
    const last = this.times[(this.head + this.len - 1) & (this.times.length - 1)];
    return Math.ceil(last + this.windowMs - now);
  }

  /** Ms until `amount` more would fit: 0 if it fits now, Infinity if it never can (amount > limit). */
  waitMs(amount: number, now: number): number {
    this.expire(now);
    const excess = this.total + amount - this.limit;
    if (excess <= 0) return 0;
    if (amount > this.limit) return Infinity;
    const mask = this.times.length - 1;
    let freed = 0;
    for (let i = 0; i < this.len; i++) {
      const at = (this.head + i) & mask;
      freed += this.amounts[at];
      if (freed >= excess) return Math.max(1, Math.ceil(this.times[at] + this.windowMs - now));
    }
    return Infinity; // unreachable: freeing everything leaves `amount` <= limit
  }

  /** Takes `amount` whatever is left (the caller checked `waitMs` first). */
  take(amount: number, now: number): void {
    if (amount <= 0) return;
    this.expire(now);
    const mask = this.times.length - 1;
    const last = (this.head + this.len - 1) & mask;
    if (this.len > 0 && Math.floor(this.times[last]) === Math.floor(now)) {
      this.amounts[last] += amount;
      if (now > this.times[last]) this.times[last] = now;
    } else {
      if (this.len === this.times.length) this.grow();
      const at = (this.head + this.len) & (this.times.length - 1);
      this.times[at] = now;
      this.amounts[at] = amount;
      this.len++;
    }
    this.total += amount;
  }

  /**
   * Hands back up to `amount` from the newest takes: a reservation that proved larger than what
   * was used (a proxy reserves an estimate, then reads the upstream's usage).
   */
  giveBack(amount: number, now: number): void {
    this.expire(now);
    const mask = this.times.length - 1;
    let left = amount;
    for (let i = this.len - 1; i >= 0 && left > 0; i--) {
      const at = (this.head + i) & mask;
      const g = Math.min(left, this.amounts[at]);
      this.amounts[at] -= g;
      this.total -= g;
      left -= g;
    }
  }

  /** Takes `amount` if it fits now; takes nothing otherwise. */
  tryTake(amount: number, now: number): boolean {
    if (this.waitMs(amount, now) !== 0) return false;
    this.take(amount, now);
    return true;
  }

  /** Drops entries older than the window: an entry taken at t counts while now < t + windowMs. */
  private expire(now: number): void {
    const mask = this.times.length - 1;
    while (this.len > 0 && this.times[this.head] + this.windowMs <= now) {
      this.total -= this.amounts[this.head];
      this.head = (this.head + 1) & mask;
      this.len--;
    }
    if (this.len === 0) this.total = 0; // no float drift survives an empty window
  }

  /** Doubles the ring, unrolling it so the oldest entry is at 0 (sizes stay powers of two). */
  private grow(): void {
    const n = this.times.length;
    const times = new Float64Array(n * 2);
    const amounts = new Float64Array(n * 2);
    for (let i = 0; i < this.len; i++) {
      times[i] = this.times[(this.head + i) & (n - 1)];
      amounts[i] = this.amounts[(this.head + i) & (n - 1)];
    }
    this.times = times;
    this.amounts = amounts;
    this.head = 0;
  }
}
