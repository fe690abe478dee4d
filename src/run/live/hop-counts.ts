import type { HopRoute } from '../metrics/result.js';
import type { StatsReading } from './upstream-control.js';

/** Hop 2 between two readings of the upstream: what came and how it was answered. */
export interface HopCounts {
  /** Model requests received, every route. */
  reached: number;
  /** Answers as sent, every route, plus `inFlight` for those not closed yet: adds up to `reached`. */
  status: Record<string, number>;
  routes: HopRoute[];
  /** Requests in flight now (every route; also those that came before the first reading). */
  inFlight: number;
  noLengthHeader: number;
  tokensServed: number;
  wastedTokens: number;
}

/**
 * Hop 2 since `base`: differences of the upstream's own counters, so it need not be reset and
 * traffic before the run does not count. Per route a request is counted when it comes and its
 * answer when it closes, so the statuses of the requests that came since `base`, plus those
 * still open, add up to what came — given nothing was in flight at `base` (`SecondHop` waits
 * for that before it begins).
 */
export function hopSince(base: StatsReading, now: StatsReading): HopCounts {
  const routes: HopRoute[] = [];
  const status: Record<string, number> = {};
  let reached = 0;
  let open = 0;
  let noLengthHeader = 0;
  for (const r of now.routes) {
    const b = base.routes.find((x) => x.route === r.route);
    const requests = since(r.requests, b?.requests);
    if (requests === 0) continue;
    const rs = sinceEach(r.status, b?.status);
    const stillOpen = Math.max(0, r.inFlight - (b?.inFlight ?? 0));
    if (stillOpen > 0) rs.inFlight = stillOpen;
    routes.push({ route: r.route, requests, status: rs });
    for (const k in rs) status[k] = (status[k] ?? 0) + rs[k];
    reached += requests;
    open += stillOpen;
    noLengthHeader += since(r.noLengthHeader, b?.noLengthHeader);
  }
  let tokensServed = 0;
  let wastedTokens = 0;
  for (const m of now.models) {
    const b = base.models.find((x) => x.name === m.name);
    tokensServed += since(m.tokensServed, b?.tokensServed);
    wastedTokens += since(m.wastedTokens, b?.wastedTokens);
  }
  return {
    reached,
    status,
    routes,
    inFlight: Math.max(open, now.inFlight),
    noLengthHeader,
    tokensServed,
    wastedTokens,
  };
}

const since = (now: number | undefined, base: number | undefined): number => Math.max(0, (now ?? 0) - (base ?? 0));

function sinceEach(now: Record<string, number> | undefined, base: Record<string, number> | undefined) {
  const out: Record<string, number> = {};
  for (const k in now ?? {}) {
    const n = since(now?.[k], base?.[k]);
    if (n > 0) out[k] = n;
  }
  return out;
}
