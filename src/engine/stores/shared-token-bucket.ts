import { checkBucketSpec, type BucketSpec, type TokenBucketLike } from '../token-bucket.js';

/** What a sync of a shared bucket hands to the store. */
export interface BucketDeltas {
  /** Tokens taken or charged here since the last sync. */
  spent: number;
  /** When the first of them was spent (Infinity if none): the store spreads the spend, and its refill, over the time since. */
  since: number;
  /** Tokens given back here since the last sync. */
  refunded: number;
  /**
   * Count this process among the sharers even if it drew nothing: on its first sync (so a
   * burst at start-up is split too) and when it was refused since the last one (it wants its
   * share; otherwise, once the bucket runs dry, every refused process would drop out and
   * each would then take the whole refill for itself).
   */
  join: boolean;
}

/** The shared bucket as the store answered: its level and how many processes share it now. */
export interface SharedLevel {
  tokens: number;
  debt: number;
  /** Processes drawing on the bucket lately, this one included (≥ 1). */
  sharers: number;
  /**
   * The store lost the bucket while this process was away (Redis restarted empty) and started
   * it again empty: the count of sharers is rebuilding, so this process keeps the count it knew
   * as a floor for `holdMs` (see `applyRemote`) rather than take the whole refill alone.
   */
  rejoined?: boolean;
}

/**
 * A token bucket that many processes share, for a store that syncs in the background.
 * Between syncs this process spends from its share of the shared level — level ÷ sharers,
 * refilled at rate ÷ sharers, capped at capacity ÷ sharers — so N busy processes cannot each
 * spend the whole bucket in one sync interval. What it spends and refunds is sent at the next
 * sync; the store applies it to the shared bucket (which refills on the shared timeline) and
 * answers with the new level. With no answer (the store is unreachable) the share keeps
 * refilling here: each process enforces its last known share of the limit by itself.
 *
 * Until the first answer the share is the whole bucket. A process that never synced has no
 * `lastSyncAt` to show the store, so a bucket the store lost looks new to it: if it is the first
 * to sync after the loss, the store starts the bucket full (see BUCKET_SYNC for the bound).
 */
export class SharedTokenBucket implements TokenBucketLike {
  readonly spec: BucketSpec;
  private readonly capacity: number;
  private readonly ratePerMs: number;
  private sharers = 1;
  private tokens: number;
  private owed = 0;
  private last = -Infinity;
  private spent = 0;
  private since = Infinity;
  private refunded = 0;
  private joined = false;
  private wanted = false;
  /** When it last drew, was refused, or joined. */
  private activeAt = -Infinity;
  /** When the store last answered for it (-Infinity: never). */
  private syncedAt = -Infinity;
  /** After a rejoin: the sharers it knew before, kept as a floor until `floorUntil`. */
  private floor = 1;
  private floorUntil = -Infinity;

  constructor(spec: BucketSpec, name = 'bucket') {
    this.spec = checkBucketSpec(spec, name);
    this.capacity = spec.capacity;
    this.ratePerMs = spec.refillPerSec / 1000;
    this.tokens = spec.initial ?? spec.capacity;
  }

  /** When the store last answered for this bucket (-Infinity: never), for the store to tell a lost bucket from a new one. */
  get lastSyncAt(): number {
    return this.syncedAt;
  }

  /** How many processes this one thinks it shares the bucket with (itself included). */
  get share(): number {
    return this.sharers;
  }

  /**
   * Whether a sync at `now` has anything to send or to learn for it: something spent or
   * refunded, a refusal, no sync yet, or activity (joining included) within `activeMs` — the
   * time it counts among the sharers, whose number its share depends on. A bucket idle for
   * longer is left out — a gateway may hold one per tenant — until it is drawn on again; its
   * first draws then spend a share that may be out of date, for one sync.
   */
  needsSync(now: number, activeMs: number): boolean {
    return this.spent !== 0 || this.refunded !== 0 || this.wanted || !this.joined || now - this.activeAt < activeMs;
  }

  available(now: number): number {
    this.refill(now);
    return this.tokens;
  }

  debt(now: number): number {
    this.refill(now);
    return this.owed;
  }

  /**
   * Takes `n` if this process's share holds them. A take larger than a whole share (one big
   * prompt against a tokens-per-minute limit shared by many) goes when the share is full, and
   * what it takes beyond the share becomes debt that refill pays first.
   */
  tryTake(n: number, now: number): boolean {
    this.refill(now);
    if (n > this.tokens && !(n <= this.capacity && this.tokens >= this.shareCap())) {
      this.wanted = true;
      this.activeAt = now;
      return false;
    }
    this.spend(n);
    this.count(n, now);
    return true;
  }

  charge(n: number, now: number): void {
    this.refill(now);
    this.spend(n);
    this.count(n, now);
  }

  refund(n: number, now: number): void {
    this.refill(now);
    this.credit(n);
    this.refunded += n;
  }

  waitMs(n: number, now: number): number {
    this.refill(now);
    if (n > this.capacity) return Infinity;
    const missing = Math.min(n, this.shareCap()) + this.owed - this.tokens;
    if (missing <= 0) return 0;
    const rate = this.ratePerMs / this.sharers;
    return rate > 0 ? missing / rate : Infinity;
  }

  takeDeltas(): BucketDeltas {
    const d = { spent: this.spent, since: this.since, refunded: this.refunded, join: !this.joined || this.wanted };
    this.spent = 0;
    this.since = Infinity;
    this.refunded = 0;
    this.wanted = false;
    return d;
  }

  requeue(d: BucketDeltas): void {
    this.spent += d.spent;
    if (d.since < this.since) this.since = d.since;
    this.refunded += d.refunded;
    if (d.join) this.wanted = true;
  }

  /**
   * Takes this process's share of the shared level at `now`, then applies what was spent or
   * refunded here since the deltas were taken (the store has not seen that yet).
   */
  applyRemote(level: SharedLevel, now: number, holdMs = 0): void {
    if (level.rejoined === true) {
      this.floor = this.sharers;
      this.floorUntil = now + holdMs;
    }
    const n = Math.max(1, level.sharers, now < this.floorUntil ? this.floor : 1);
    this.syncedAt = now;
    this.sharers = n;
    if (!this.joined) this.activeAt = now;
    this.joined = true;
    this.tokens = Math.min(level.tokens, this.capacity) / n;
    this.owed = level.debt / n;
    this.last = now;
    if (this.refunded > 0) this.credit(this.refunded);
    if (this.spent > 0) this.spend(this.spent);
  }

  private count(n: number, now: number): void {
    this.activeAt = now;
    if (this.spent === 0) this.since = now;
    this.spent += n;
  }

  private refill(now: number): void {
    const last = this.last;
    if (now <= last) return;
    this.last = now;
    if (last !== -Infinity) this.credit(((now - last) * this.ratePerMs) / this.sharers);
  }

  private spend(n: number): void {
    if (n <= this.tokens) {
      this.tokens -= n;
    } else {
      this.owed += n - this.tokens;
      this.tokens = 0;
    }
  }

  private credit(n: number): void {
    if (this.owed > 0) {
      const paid = Math.min(n, this.owed);
      this.owed -= paid;
      n -= paid;
    }
    const t = this.tokens + n;
    const cap = this.shareCap();
    this.tokens = Math.min(t, cap);
  }

  private shareCap(): number {
    return this.capacity / this.sharers;
  }
}
