import { TokenBucket } from '../engine/token-bucket.js';
import { mix32 } from './shape.js';
import type { EntryConfig, TenantConfig } from './tool-call-config.js';

/**
 * The first of the three layers of limits: root tasks enter through a token bucket per tenant,
 * and one refused gets a retry-after hint (when the bucket has a token again), which the
 * simulated user may honour. Tenants are drawn by weight from the root task's key, so a task
 * keeps its tenant across resubmissions and nothing is stored per task.
 */
export class EntryGate {
  private readonly cum: Float64Array;
  private readonly buckets: TokenBucket[];

  constructor(
    readonly tenants: readonly TenantConfig[],
    entry: EntryConfig | undefined,
  ) {
    const total = tenants.reduce((a, t) => a + t.weight, 0);
    let sum = 0;
    this.cum = Float64Array.from(tenants, (t) => (sum += t.weight / total));
    this.buckets =
      entry === undefined
        ? []
        : tenants.map((t) => new TokenBucket({ capacity: entry.burst, refillPerSec: entry.rps }, `entry.${t.name}`));
  }

  /** The tenant of the root task with key `rootKey`. */
  tenantOf(rootKey: number): number {
    const u = mix32(rootKey ^ 0x2545f491) / 4294967296;
    for (let i = 0; i < this.cum.length - 1; i++) if (u < this.cum[i]) return i;
    return this.cum.length - 1;
  }

  /** −1 if a submission of `tenant` may enter now; else the refusal's retry-after hint, ms. */
  admit(tenant: number, now: number): number {
    const b = this.buckets[tenant];
    if (b === undefined || b.tryTake(1, now)) return -1;
    const wait = b.waitMs(1, now);
    return wait === Infinity ? -1 : Math.max(1, Math.ceil(wait));
  }
}
