import type { ServedModelStats } from './upstream-host.js';

/** What the server itself saw, apart from the model. */
export interface HttpCounters {
  /** Requests received, every route. */
  received: number;
  /** Answered 4xx by the server before the model saw them (bad input, unknown route or model, too large). */
  invalid: number;
  /** Chat requests whose client went away before the answer (the model was told: `cancel`). */
  clientClosed: number;
  /** Errors inside the server (a bug): answered 500 or the connection closed; it keeps serving. */
  internalErrors: number;
}

/**
 * One route's model requests as they went out on the wire (`GET /_stormlab/stats` → `routes`).
 * After the route is quiet, `status` adds up to `requests`: every request received is counted
 * once, by what it was answered.
 */
export interface RouteStats {
  /** The path, e.g. `/v1/chat/completions` (an unknown path under `/v1/` too: it was answered 404). */
  route: string;
  /** Model requests received (every POST under `/v1/`), whatever they were answered. */
  requests: number;
  /** Received and not closed yet: being read, waiting for the model, or being answered. */
  inFlight: number;
  /**
   * Closed requests by what was sent: the HTTP status as written (`"503"` for an overload on
   * the OpenAI routes, which the model counts as 529), `"reset"` for a connection reset with
   * no answer, `"cancelled"` for a client that left before any answer. A 200 whose stream broke
   * is a 200: that is the status that went out. Only non-zero entries appear.
   */
  status: Record<string, number>;
  /** Requests that came without `x-stormlab-output-tokens` (a gateway that does not pass it on). */
  noLengthHeader: number;
}

/** `GET /_stormlab/stats`. */
export interface FakeUpstreamStats {
  /** ms since the server started: the timeline fault phases are written on. */
  nowMs: number;
  /** Model requests received and not closed yet, every route (0 and quiet: nothing more is coming). */
  inFlight: number;
  /** When a model request last arrived or closed, ms on the server's timeline; null before the first. */
  lastActivityMs: number | null;
  http: HttpCounters;
  /** Per route that got a model request: requests, in flight, statuses as sent, requests without the length header. */
  routes: RouteStats[];
  /** Per model: attempts, answers by status ('0' = reset) and by detail, busy, queued, tokens, wasted tokens, cancels, quotas. */
  models: ServedModelStats[];
}

/** Status slots: HTTP statuses 0..599, then a connection reset and a client that left first. */
const RESET_SLOT = 600;
const CANCELLED_SLOT = 601;
const SLOTS = 602;
/** Routes counted apart; past this many distinct paths (404s under /v1/) the rest share one row. */
const MAX_ROUTES = 64;
const OTHER_ROUTE = '(other)';

/** How a model request that closed was answered: its HTTP status, or that it got none. */
export type ClosedAs = number | 'reset' | 'cancelled';

/**
 * The per-route counters of a server's model requests — the part of `GET /_stormlab/stats`
 * that a harness reading a second hop relies on (see ARCHITECTURE.md, "The upstream behind a
 * gateway"). Every model request is `opened` when it arrives and `closed` once, when its
 * response closes, with what went out on the wire; so `inFlight` falls back to 0 and
 * `lastActivityMs` stops moving when a client stops sending, and then each route's statuses
 * add up to its requests. Any server speaking the control API (`serve`, a proxy) feeds one of
 * these from its request log.
 */
export class RouteCounters {
  private readonly names: string[] = [];
  private readonly index = new Map<string, number>();
  private requests: number[] = [];
  private open: number[] = [];
  private noHeader: number[] = [];
  private statuses: Float64Array[] = [];
  private openTotal = 0;
  private lastAt: number | null = null;

  constructor(private readonly now: () => number) {}

  /** A model request arrived on `route`; the number it returns goes to `closed`. */
  opened(route: string, withLengthHeader: boolean): number {
    const i = this.slot(route);
    this.requests[i]++;
    this.open[i]++;
    if (!withLengthHeader) this.noHeader[i]++;
    this.openTotal++;
    this.lastAt = this.now();
    return i;
  }

  /** The request `opened` gave `slot` for closed, answered as `how`. */
  closed(slot: number, how: ClosedAs): void {
    const s = how === 'reset' ? RESET_SLOT : how === 'cancelled' ? CANCELLED_SLOT : how >= 0 && how < 600 ? how : 0;
    this.statuses[slot][s]++;
    this.open[slot]--;
    this.openTotal--;
    this.lastAt = this.now();
  }

  get inFlight(): number {
    return this.openTotal;
  }

  get lastActivityMs(): number | null {
    return this.lastAt;
  }

  routes(): RouteStats[] {
    return this.names.map((route, i) => {
      const status: Record<string, number> = {};
      const counts = this.statuses[i];
      for (let s = 0; s < SLOTS; s++) if (counts[s] > 0) status[slotName(s)] = counts[s];
      return { route, requests: this.requests[i], inFlight: this.open[i], status, noLengthHeader: this.noHeader[i] };
    });
  }

  /**
   * Counters back to zero. Requests still open count as received after the reset (their close
   * is counted then), so statuses and requests still agree once the route is quiet.
   */
  reset(): void {
    this.requests = [...this.open];
    this.noHeader = this.open.map(() => 0);
    this.statuses = this.statuses.map(() => new Float64Array(SLOTS));
  }

  private slot(route: string): number {
    const known = this.index.get(route);
    if (known !== undefined) return known;
    const name = this.names.length < MAX_ROUTES - 1 ? route : OTHER_ROUTE;
    const existing = this.index.get(name);
    if (existing !== undefined) return existing;
    const i = this.names.length;
    this.names.push(name);
    this.index.set(name, i);
    this.requests.push(0);
    this.open.push(0);
    this.noHeader.push(0);
    this.statuses.push(new Float64Array(SLOTS));
    return i;
  }
}

function slotName(slot: number): string {
  return slot === RESET_SLOT ? 'reset' : slot === CANCELLED_SLOT ? 'cancelled' : String(slot);
}
