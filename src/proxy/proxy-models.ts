import type { ServedModelStats } from '../fake-upstream/upstream-host.js';
import { DETAIL_NAMES } from '../upstream/response.js';
import { Quota } from '../upstream/quota.js';

/** Models counted apart; past this many distinct names the rest share one row. */
const MAX_MODELS = 64;
const OTHER = '(other)';

/** Per-model limits a proxy enforces in front of its upstream, each model on its own. */
export interface ProxyQuotas {
  /** Requests per minute per model. */
  rpm?: number;
  /** Tokens per minute per model: an estimate reserved at arrival, set right from the upstream's usage. */
  tpm?: number;
}

/** One model's counters in the proxy, the fake upstream's `ModelStats` shape (nothing is queued at a proxy). */
export class ProxyModel {
  busy = 0;
  attempts = 0;
  byStatus: Record<string, number> = {};
  byDetail: Record<string, number> = {};
  tokensServed = 0;
  cancelled = 0;
  readonly rpm: Quota | null;
  readonly tpm: Quota | null;

  constructor(
    readonly name: string,
    quotas: ProxyQuotas,
  ) {
    this.rpm = quotas.rpm === undefined ? null : new Quota(quotas.rpm, 60_000, 'rpm');
    this.tpm = quotas.tpm === undefined ? null : new Quota(quotas.tpm, 60_000, 'tpm');
  }

  /** An answer went out: `status` as written (0: reset or none), a `Detail` code. */
  answered(status: number, detail: number): void {
    this.byStatus[status] = (this.byStatus[status] ?? 0) + 1;
    const d = DETAIL_NAMES[detail] ?? String(detail);
    this.byDetail[d] = (this.byDetail[d] ?? 0) + 1;
  }
}

/** The models requests named, with their counters and quotas. */
export class ProxyModels {
  private readonly byName = new Map<string, ProxyModel>();

  constructor(private readonly quotas: ProxyQuotas) {}

  get(name: string): ProxyModel {
    let m = this.byName.get(name);
    if (m !== undefined) return m;
    if (this.byName.size >= MAX_MODELS - 1) return this.get(OTHER);
    m = new ProxyModel(name, this.quotas);
    this.byName.set(name, m);
    return m;
  }

  stats(now: number): ServedModelStats[] {
    return [...this.byName.values()].map((m) => {
      const quotas: ServedModelStats['quotas'] = {};
      const fig = (q: Quota) => ({ limit: q.limit, remaining: Math.floor(q.remaining(now)), resetMs: q.resetMs(now) });
      if (m.rpm !== null) quotas.requests = fig(m.rpm);
      if (m.tpm !== null) quotas.tokens = fig(m.tpm);
      return {
        name: m.name,
        busy: m.busy,
        queued: 0,
        attempts: m.attempts,
        byStatus: { ...m.byStatus },
        byDetail: { ...m.byDetail },
        tokensServed: m.tokensServed,
        wastedTokens: 0,
        cancelled: m.cancelled,
        quotas,
      };
    });
  }

  /** Counters and quotas back to zero (requests in flight finish on their old rows, not counted). */
  reset(): void {
    this.byName.clear();
  }
}
