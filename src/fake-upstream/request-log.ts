import type { IncomingMessage, ServerResponse } from 'node:http';
import { OUTPUT_TOKENS_HEADER } from '../upstream/output-tokens-header.js';
import { DETAIL_NAMES, Detail } from '../upstream/response.js';
import { RouteCounters } from './fake-upstream-stats.js';

/** One model request as the server saw it (`GET /_stormlab/requests`, `stormlab serve --log FILE`). */
export interface RequestLogEntry {
  /** When it arrived, ISO 8601. */
  time: string;
  method: string;
  route: string;
  /** The model named in the body (null when the body never said). */
  model: string | null;
  /** The client's retry counter (`x-stainless-retry-count`, sent by the OpenAI and Anthropic SDKs and what wraps them), null when absent. */
  retryCount: number | null;
  stream: boolean;
  /** The HTTP status answered; 0 when no answer was written (a reset, or the client left first). */
  status: number;
  /** Why an answer was not the model's plain success: the model's detail (`Fault`, `Overloaded`, `RateLimitRequests`, `MidStream`, `Reset`, …) or `ClientClosed`; null otherwise. */
  fault: string | null;
  /** From arrival to the end of the answer, ms. */
  latencyMs: number;
}

/** How many entries `GET /_stormlab/requests` can show: the oldest go first. */
export const REQUEST_LOG_CAPACITY = 10_000;
const RETRY_HEADERS = ['x-stainless-retry-count', 'x-retry-count', 'x-retry-attempt'];

/**
 * The open record of a request, until its response closes: then it is copied into the ring's
 * columns (typed arrays and arrays of shared strings), so that the 10,000 requests the log
 * keeps are not 10,000 objects the collector copies at every young collection and then moves
 * to the old generation, at tens of thousands of requests a second.
 */
interface LogRecord {
  /** Arrival, ms on the server's timeline. */
  startedAt: number;
  method: string;
  route: string;
  model: string | null;
  retryCount: number | null;
  stream: boolean;
  /** A `Detail` code, -1 for none. */
  detail: number;
  /** Its row in the route counters (a model request: a POST), -1 when not counted there. */
  counted: number;
}

/** The open record of a response, on the response itself (a property reads faster than a WeakMap). */
const OPEN = Symbol('stormlab.requestLog');
type Logged = ServerResponse & { [OPEN]?: LogRecord; [LOG]?: RequestLog };
const LOG = Symbol('stormlab.requestLog.owner');

/** How a response that did not finish ended (the `ended` column). */
const ENDED = [null, 'ClientClosed', 'Broken'] as const;
/** Route names kept once each; past this many distinct ones (404s under /v1/) they are kept as sent. */
const MAX_ROUTE_NAMES = 64;

/**
 * Every model request (the `/v1/*` routes) with its client retry counter, status, fault and
 * latency, so the retries an SDK hides (`maxRetries: 2` by default) show one line each. Kept in
 * a ring of `REQUEST_LOG_CAPACITY` rows; `sink` hears each finished entry (the CLI writes
 * JSONL). Entries are formatted only when read or sunk: a request costs the log one short-lived
 * record and one `close` listener shared by all responses. `routes` counts the model requests
 * (the POSTs) per route by what went out on the wire, for `GET /_stormlab/stats`.
 */
export class RequestLog {
  readonly routes: RouteCounters;
  /** Rows filled so far (at most `capacity`); `next` is the row the next record goes in. */
  private count = 0;
  private next = 0;
  private readonly startedAt: Float64Array;
  private readonly latencyMs: Float64Array;
  /** NaN: no retry counter sent. */
  private readonly retryCount: Float64Array;
  private readonly status: Int16Array;
  private readonly detail: Int16Array;
  /** Bit 0: a stream; bits 1–2: the index in `ENDED`. */
  private readonly flags: Uint8Array;
  private readonly method: string[];
  private readonly route: string[];
  private readonly model: Array<string | null>;
  private readonly routeNames = new Map<string, string>();

  constructor(
    private readonly now: () => number,
    private readonly epochMs: number,
    private readonly sink?: (entry: RequestLogEntry) => void,
    private readonly capacity = REQUEST_LOG_CAPACITY,
  ) {
    this.startedAt = new Float64Array(capacity);
    this.latencyMs = new Float64Array(capacity);
    this.retryCount = new Float64Array(capacity);
    this.status = new Int16Array(capacity);
    this.detail = new Int16Array(capacity);
    this.flags = new Uint8Array(capacity);
    this.method = new Array<string>(capacity).fill('');
    this.route = new Array<string>(capacity).fill('');
    this.model = new Array<string | null>(capacity).fill(null);
    this.routes = new RouteCounters(now);
  }

  /** Starts an entry for `req`; it is written when `res` closes. */
  begin(req: IncomingMessage, res: ServerResponse, route: string): void {
    const r = res as Logged;
    const name = this.routeName(route);
    r[OPEN] = {
      startedAt: this.now(),
      method: req.method ?? '',
      route: name,
      model: null,
      retryCount: retryCount(req),
      stream: false,
      detail: -1,
      counted: req.method === 'POST' ? this.routes.opened(name, req.headers[OUTPUT_TOKENS_HEADER] !== undefined) : -1,
    };
    r[LOG] = this;
    res.on('close', onClose);
  }

  /** The body named `model` (and asked for a stream or not). */
  request(res: ServerResponse, model: string, stream: boolean): void {
    const o = (res as Logged)[OPEN];
    if (o === undefined) return;
    o.model = model;
    o.stream = stream;
  }

  /** The model's outcome for this response (`Detail` code). */
  outcome(res: ServerResponse, detail: number): void {
    const o = (res as Logged)[OPEN];
    if (o !== undefined && detail !== Detail.None) o.detail = detail;
  }

  /** The newest `limit` entries, oldest first. */
  list(limit = this.capacity): RequestLogEntry[] {
    const n = Math.max(0, Math.min(limit, this.count));
    const first = this.count < this.capacity ? this.count - n : this.next + this.capacity - n;
    return Array.from({ length: n }, (_, i) => this.entry((first + i) % this.capacity));
  }

  /** The log and its route counters back to zero (requests still open are counted when they close). */
  clear(): void {
    this.count = 0;
    this.next = 0;
    this.routes.reset();
  }

  /** @internal The response closed: its record goes into the ring (and to the sink). */
  end(res: ServerResponse, o: LogRecord): void {
    const i = this.next;
    this.next = (i + 1) % this.capacity;
    if (this.count < this.capacity) this.count++;
    this.startedAt[i] = o.startedAt;
    this.latencyMs[i] = Math.round((this.now() - o.startedAt) * 10) / 10;
    this.retryCount[i] = o.retryCount ?? Number.NaN;
    this.status[i] = res.headersSent ? res.statusCode : 0;
    this.detail[i] = o.detail;
    if (o.counted >= 0)
      this.routes.closed(
        o.counted,
        res.headersSent ? res.statusCode : o.detail === Detail.Reset ? 'reset' : 'cancelled',
      );
    const ended = res.writableFinished || o.detail >= 0 ? 0 : res.headersSent ? 2 : 1;
    this.flags[i] = (o.stream ? 1 : 0) | (ended << 1);
    this.method[i] = o.method;
    this.route[i] = o.route;
    this.model[i] = o.model;
    if (this.sink !== undefined) this.sink(this.entry(i));
  }

  /** The route's name as kept: one string per route, not one per request. */
  private routeName(route: string): string {
    const known = this.routeNames.get(route);
    if (known !== undefined) return known;
    if (this.routeNames.size < MAX_ROUTE_NAMES) this.routeNames.set(route, route);
    return route;
  }

  private entry(i: number): RequestLogEntry {
    const detail = this.detail[i];
    const retry = this.retryCount[i];
    return {
      time: new Date(this.epochMs + this.startedAt[i]).toISOString(),
      method: this.method[i],
      route: this.route[i],
      model: this.model[i],
      retryCount: Number.isNaN(retry) ? null : retry,
      stream: (this.flags[i] & 1) === 1,
      status: this.status[i],
      fault: detail >= 0 ? (DETAIL_NAMES[detail] ?? String(detail)) : ENDED[this.flags[i] >> 1],
      latencyMs: this.latencyMs[i],
    };
  }
}

/** The one `close` listener of every logged response (`this` is the response). */
function onClose(this: ServerResponse): void {
  const r = this as Logged;
  const o = r[OPEN];
  const log = r[LOG];
  if (o === undefined || log === undefined) return;
  r[OPEN] = undefined;
  log.end(this, o);
}

function retryCount(req: IncomingMessage): number | null {
  const h = req.headers;
  for (const name of RETRY_HEADERS) {
    const v = h[name];
    if (v === undefined) continue;
    const n = Number(Array.isArray(v) ? v[0] : v);
    if (Number.isFinite(n)) return n;
  }
  return null;
}
