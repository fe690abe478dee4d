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

interface Open {
  entry: RequestLogEntry;
  startedAt: number;
}

/**
 * Every model request (the `/v1/*` routes) with its client retry counter, status, fault and
 * latency, so the retries an SDK hides (`maxRetries: 2` by default) show one line each. Kept in
 * a ring of `REQUEST_LOG_CAPACITY`; `sink` hears each finished entry (the CLI writes JSONL).
 */
export class RequestLog {
  /** A ring: `next` is where the next entry goes once it is full. */
  private readonly entries: RequestLogEntry[] = [];
  private next = 0;
  private readonly open = new WeakMap<ServerResponse, Open>();

  constructor(
    private readonly now: () => number,
    private readonly epochMs: number,
    private readonly sink?: (entry: RequestLogEntry) => void,
    private readonly capacity = REQUEST_LOG_CAPACITY,
  ) {}

  /** Starts an entry for `req`; it is written when `res` closes. */
  begin(req: IncomingMessage, res: ServerResponse, route: string): void {
    const startedAt = this.now();
    const entry: RequestLogEntry = {
      time: new Date(this.epochMs + startedAt).toISOString(),
      method: req.method ?? '',
      route,
      model: null,
      retryCount: retryCount(req),
      stream: false,
      status: 0,
      fault: null,
      latencyMs: 0,
    };
    this.open.set(res, { entry, startedAt });
    res.on('close', () => this.end(res));
  }

  /** The body named `model` (and asked for a stream or not). */
  request(res: ServerResponse, model: string, stream: boolean): void {
    const o = this.open.get(res);
    if (o === undefined) return;
    o.entry.model = model;
    o.entry.stream = stream;
  }

  /** The model's outcome for this response (`Detail` code). */
  outcome(res: ServerResponse, detail: number): void {
    const o = this.open.get(res);
    if (o !== undefined && detail !== Detail.None) o.entry.fault = DETAIL_NAMES[detail] ?? String(detail);
  }

  /** The newest `limit` entries, oldest first. */
  list(limit = this.capacity): RequestLogEntry[] {
    const ordered = [...this.entries.slice(this.next), ...this.entries.slice(0, this.next)];
    return ordered.slice(Math.max(0, ordered.length - limit));
  }

  clear(): void {
    this.entries.length = 0;
    this.next = 0;
  }

  private end(res: ServerResponse): void {
    const o = this.open.get(res);
    if (o === undefined) return;
    this.open.delete(res);
    const { entry } = o;
    entry.latencyMs = Math.round((this.now() - o.startedAt) * 10) / 10;
    entry.status = res.headersSent ? res.statusCode : 0;
    if (!res.writableFinished && entry.fault === null) entry.fault = res.headersSent ? 'Broken' : 'ClientClosed';
    if (this.entries.length < this.capacity) this.entries.push(entry);
    else {
      this.entries[this.next] = entry;
      this.next = (this.next + 1) % this.capacity;
    }
    this.sink?.(entry);
  }
}

function retryCount(req: IncomingMessage): number | null {
  for (const h of RETRY_HEADERS) {
    const v = req.headers[h];
    const n = Number(Array.isArray(v) ? v[0] : v);
    if (v !== undefined && Number.isFinite(n)) return n;
  }
  return null;
}
