import { TokenBucket } from '../engine/token-bucket.js';
import { mix32 } from './shape.js';
import { type EntryConfig, TENANT_DEFAULT_USERS, type TenantConfig } from './tool-call-config.js';

/** Per-user buckets kept before the gate sweeps out the full ones (a full bucket is a fresh one). */
const SWEEP_AT = 1024;

/**
 * The first of the three layers of limits: root tasks enter through a token bucket per tenant
 * (or, `per: user`, per user of each tenant), and one refused gets a retry-after hint (when the
 * bucket has a token again), which the simulated user may honour. Tenants are drawn by weight
 * from the root task's key, and its user from the tenant's users by the same key, so a task
 * keeps its tenant and user across resubmissions and nothing is stored per task.
 *
 * Per-user buckets are made when a user first submits; a bucket that has refilled to its
 * burst is the same as a fresh one, so the gate drops those whenever the map has grown past a
 * threshold: memory follows the users active in the last `burst / rps` seconds, not all users.
 */
export class EntryGate {
  private readonly cum: Float64Array;
  /** Per tenant (`per: tenant`): its bucket. */
  private readonly buckets: TokenBucket[] = [];
  /** Per user (`per: user`): its bucket by `userBase[tenant] + user`, made lazily. */
  private readonly userBuckets = new Map<number, TokenBucket>();
  private readonly userBase: number[] = [];
  private sweepAt = SWEEP_AT;

  constructor(
    readonly tenants: readonly TenantConfig[],
    private readonly entry: EntryConfig | undefined,
  ) {
    const total = tenants.reduce((a, t) => a + t.weight, 0);
    let sum = 0;
    this.cum = Float64Array.from(tenants, (t) => (sum += t.weight / total));
    let base = 0;
    for (const t of tenants) {
      this.userBase.push(base);
      base += t.users ?? TENANT_DEFAULT_USERS;
    }
    if (entry !== undefined && entry.per === 'tenant')
      this.buckets = tenants.map((t) => this.bucket(`entry.${t.name}`));
  }

  /** The tenant of the root task with key `rootKey`. */
  tenantOf(rootKey: number): number {
    const u = mix32(rootKey ^ 0x2545f491) / 4294967296;
    for (let i = 0; i < this.cum.length - 1; i++) if (u < this.cum[i]) return i;
    return this.cum.length - 1;
  }

  /** The user (0 … users − 1 of its tenant) of the root task with key `rootKey`. */
  userOf(rootKey: number, tenant: number): number {
    const users = this.tenants[tenant].users ?? TENANT_DEFAULT_USERS;
    return users === 1 ? 0 : Math.floor((mix32(rootKey ^ 0x68e31da4) / 4294967296) * users);
  }

  /** −1 if a submission of `tenant`'s `user` may enter now; else the refusal's retry-after hint, ms. */
  admit(tenant: number, user: number, now: number): number {
    const b = this.entry?.per === 'user' ? this.userBucket(tenant, user, now) : this.buckets[tenant];
    if (b === undefined || b.tryTake(1, now)) return -1;
    const wait = b.waitMs(1, now);
    return wait === Infinity ? -1 : Math.max(1, Math.ceil(wait));
  }

  /** Per-user buckets held now (for tests: memory stays bounded). */
  get userBucketCount(): number {
    return this.userBuckets.size;
  }

  private userBucket(tenant: number, user: number, now: number): TokenBucket {
    const id = this.userBase[tenant] + user;
    let b = this.userBuckets.get(id);
    if (b === undefined) {
      if (this.userBuckets.size >= this.sweepAt) this.sweep(now);
      b = this.bucket(`entry.${this.tenants[tenant].name}.u${user}`);
      this.userBuckets.set(id, b);
    }
    return b;
  }

  /** Drops the buckets back at their burst; the next threshold doubles what is left, so sweeps stay amortised. */
  private sweep(now: number): void {
    const burst = this.entry!.burst;
    for (const [id, b] of this.userBuckets) if (b.available(now) >= burst) this.userBuckets.delete(id);
    this.sweepAt = Math.max(SWEEP_AT, 2 * this.userBuckets.size);
  }

  private bucket(name: string): TokenBucket {
    const e = this.entry!;
    return new TokenBucket({ capacity: e.burst, refillPerSec: e.rps }, name);
  }
}
