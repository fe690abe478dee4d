import type { IncomingMessage, ServerResponse } from 'node:http';
import { DETAIL_NAMES, Detail } from '../upstream/response.js';

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
 * One request as the log keeps it: the entry less its formatted time (an ISO string per request
 * costs more than the rest of the record together), made into an entry only when it is read.
 */
interface LogRecord {
  /** Arrival, ms on the server's timeline. */
  startedAt: number;
  method: string;
  route: string;
  model: string | null;
  retryCount: number | null;
  stream: boolean;
  status: number;
  /** A `Detail` code, -1 for none; the server's own faults by name below. */
  detail: number;
  /** `ClientClosed` or `Broken` when the response did not finish; null otherwise. */
  ended: string | null;
  latencyMs: number;
}

/** The open record of a response, on the response itself (a property reads faster than a WeakMap). */
const OPEN = Symbol('stormlab.requestLog');
type Logged = ServerResponse & { [OPEN]?: LogRecord; [LOG]?: RequestLog };
const LOG = Symbol('stormlab.requestLog.owner');

/**
 * Every model request (the `/v1/*` routes) with its client retry counter, status, fault and
 * latency, so the retries an SDK hides (`maxRetries: 2` by default) show one line each. Kept in
 * a ring of `REQUEST_LOG_CAPACITY` small records; `sink` hears each finished entry (the CLI
 * writes JSONL). Entries are formatted only when read or sunk: a request costs the log one
 * record and one `close` listener shared by all responses.
 */
export class RequestLog {
  /** A ring: `next` is where the next record goes once it is full. */
  private readonly records: LogRecord[] = [];
  private next = 0;

  constructor(
    private readonly now: () => number,
    private readonly epochMs: number,
    private readonly sink?: (entry: RequestLogEntry) => void,
    private readonly capacity = REQUEST_LOG_CAPACITY,
  ) {}

  /** Starts an entry for `req`; it is written when `res` closes. */
  begin(req: IncomingMessage, res: ServerResponse, route: string): void {
    const r = res as Logged;
    r[OPEN] = {
      startedAt: this.now(),
      method: req.method ?? '',
      route,
      model: null,
      retryCount: retryCount(req),
      stream: false,
      status: 0,
      detail: -1,
      ended: null,
      latencyMs: 0,
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
    const ordered = [...this.records.slice(this.next), ...this.records.slice(0, this.next)];
    return ordered.slice(Math.max(0, ordered.length - limit)).map((r) => this.entry(r));
  }

  clear(): void {
    this.records.length = 0;
    this.next = 0;
  }

  /** @internal The response closed: its record goes into the ring (and to the sink). */
  end(res: ServerResponse, o: LogRecord): void {
    o.latencyMs = Math.round((this.now() - o.startedAt) * 10) / 10;
    o.status = res.headersSent ? res.statusCode : 0;
    if (!res.writableFinished && o.detail < 0) o.ended = res.headersSent ? 'Broken' : 'ClientClosed';
    if (this.records.length < this.capacity) this.records.push(o);
    else {
      this.records[this.next] = o;
      this.next = (this.next + 1) % this.capacity;
    }
    if (this.sink !== undefined) this.sink(this.entry(o));
  }

  private entry(r: LogRecord): RequestLogEntry {
    return {
      time: new Date(this.epochMs + r.startedAt).toISOString(),
      method: r.method,
      route: r.route,
      model: r.model,
      retryCount: r.retryCount,
      stream: r.stream,
      status: r.status,
      fault: r.detail >= 0 ? (DETAIL_NAMES[r.detail] ?? String(r.detail)) : r.ended,
      latencyMs: r.latencyMs,
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
