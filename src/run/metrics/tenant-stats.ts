import { addCounts, type PackedCounts, packCounts } from './packed-counts.js';
import { ratio, round6 } from './round.js';
import type { TenantResult } from './tool-result.js';

const OFFERED = 0;
const OK = 1;
const LATE = 2;
const FAILED = 3;
const REFUSED = 4;
const FIELDS = 5;

/** Root-task counters per tenant: who got the goodput when one tenant floods. */
export class TenantStats {
  private readonly counts: Float64Array;

  constructor(readonly names: readonly string[]) {
    this.counts = new Float64Array(names.length * FIELDS);
  }

  offered(tenant: number): void {
    this.counts[tenant * FIELDS + OFFERED]++;
  }

  done(tenant: number, ok: boolean, withinDeadline: boolean): void {
    this.counts[tenant * FIELDS + (!ok ? FAILED : withinDeadline ? OK : LATE)]++;
  }

  refused(tenant: number): void {
    this.counts[tenant * FIELDS + REFUSED]++;
  }

  state(): PackedCounts {
    return packCounts(this.counts);
  }

  absorb(s: PackedCounts): void {
    addCounts(this.counts, s);
  }

  result(elapsedMs: number): TenantResult[] {
    return this.names.map((name, i) => {
      const c = (f: number): number => this.counts[i * FIELDS + f];
      return {
        name,
        offered: c(OFFERED),
        ok: c(OK),
        late: c(LATE),
        failed: c(FAILED),
        refused: c(REFUSED),
        goodput: round6(ratio(c(OK), elapsedMs / 1000)),
        successRate: round6(ratio(c(OK), c(OFFERED))),
      };
    });
  }
}
