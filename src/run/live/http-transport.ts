import type { Client } from 'undici';
import { parseRetryAfter } from '../../engine/retry-after.js';
import type { LeafTransport } from '../../traffic/observer.js';
import type { LiveFigures } from '../metrics/result.js';
import { Detail, DETAIL_NAMES, RequestFlag, StreamEvent, type UpstreamListener } from '../../upstream/response.js';
import type { ModelStats, UpstreamStats } from '../../upstream/upstream-model.js';
import { ClientSet, type SetRequest } from './client-set.js';
import { type LiveApi, StreamScan, usageTokens, WireFormat } from './wire-format.js';

export const HTTP_TRANSPORT_DEFAULTS = {
  /** Connections (undici clients) kept to the target; requests past them wait for one. @default 256 */
  connections: 256,
  /** Extra request headers (`authorization`, a gateway's routing key). @default none */
  headers: {} as Readonly<Record<string, string>>,
  /** The API requests are written in: OpenAI chat completions or Anthropic messages. @default 'openai' */
  api: 'openai' as LiveApi,
  /**
   * Ask every request for an SSE stream (`stream: true`; OpenAI's with `include_usage`); a
   * request submitted with `RequestFlag.Stream` (a layer's `stream`) asks for one either way.
   * @default false
   */
  stream: false,
};

export type HttpTransportOptions = Partial<typeof HTTP_TRANSPORT_DEFAULTS>;

/**
 * The detail code of an HTTP answer, from its status and (parsed) JSON body, in either
 * provider's shape: `{ error: { type, code } }` (OpenAI) or `{ type: 'error', error: { type } }`
 * (Anthropic). 429s tell an empty account (`insufficient_quota`, Anthropic's `billing_error`)
 * from a tokens-per-minute limit (type `tokens`) from a requests one (anything else).
 */
export function detailOf(status: number, body: unknown): number {
  const error = typeof body === 'object' && body !== null ? (body as { error?: unknown }).error : undefined;
  const e: { type?: unknown; code?: unknown; message?: unknown } =
    typeof error === 'object' && error !== null ? error : {};
  if (status === 429) {
    if (e.code === 'insufficient_quota' || e.type === 'insufficient_quota' || e.type === 'billing_error')
      return Detail.InsufficientQuota;
    return e.type === 'tokens' || e.code === 'tokens' ? Detail.RateLimitTokens : Detail.RateLimitRequests;
  }
  if (status === 529 || status === 503 || e.type === 'overloaded_error') return Detail.Overloaded;
  if (status === 400 && (e.code === 'context_length_exceeded' || /prompt is too long/.test(String(e.message))))
    return Detail.ContextLength;
  return Detail.None;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The reason a cancelled request is aborted with: one error, not a stack per cancel. */
const CANCELLED = Object.freeze(
  Object.assign(new Error('the caller gave up on this request'), { name: 'AbortError', code: 'STORMLAB_CANCELLED' }),
);

/** Status codes that say the request was not one the target takes (wrong path, model, auth), not a fault. */
function isRefusal(status: number, detail: number): boolean {
  return status >= 400 && status < 500 && status !== 408 && status !== 429 && detail !== Detail.ContextLength;
}

/**
 * One request in flight: the handler undici's lowest layer (`Client.dispatch`) calls as the
 * answer comes. No promise, no body stream, no abort signal: the state of one attempt is this
 * object, and its answer is read from the bytes as they arrive (see `wire-format.ts`).
 */
class Attempt implements SetRequest {
  abortFn: ((err?: Error) => void) | undefined = undefined;
  cancelled = false;
  client: Client | undefined = undefined;
  status = 0;
  rawHeaders: Buffer[] | undefined = undefined;
  /** A JSON answer's text (a 200's as latin1: it is read for the ASCII digits of its usage). */
  text = '';
  scan: StreamScan | undefined = undefined;
  /** When the stream last brought a chunk, from its first token on (told streams only; -1 before). */
  lastAt = -1;

  constructor(
    readonly t: HttpTransport,
    readonly reqId: number,
    readonly model: number,
    readonly promptTokens: number,
    /** The request asks for a stream. */
    readonly streamed: boolean,
    /** The caller is told the stream's first token (`RequestFlag.Stream`). */
    readonly told: boolean,
  ) {}

  onConnect(abort: (err?: Error) => void): void {
    this.abortFn = abort;
    if (this.cancelled) abort(CANCELLED);
  }

  /** Its request is written whole (undici calls it; a request given up on while it waited for a connection never is). */
  onRequestSent(): void {
    this.t.written++;
  }

  onHeaders(status: number, rawHeaders: Buffer[]): boolean {
    if (status < 200) return true; // 1xx: the answer is still to come
    this.status = status;
    if (status !== 200) this.rawHeaders = rawHeaders;
    else if (this.streamed && isEventStream(rawHeaders)) this.scan = new StreamScan(this.t.api); // else a JSON answer after all
    return true;
  }

  onData(chunk: Buffer): boolean {
    const scan = this.scan;
    // Error bodies as UTF-8 (their message is shown); a 200 JSON answer is read for its usage only.
    if (scan === undefined) this.text += chunk.toString(this.status === 200 ? 'latin1' : 'utf8');
    else if (!this.told) scan.push(chunk);
    else if (scan.content) {
      scan.push(chunk);
      // The idle watch's one input: a clock read per chunk, no timer (see lastEventAt).
      this.lastAt = this.t.now();
    } else {
      scan.push(chunk);
      if (scan.content) this.t.firstToken(this);
    }
    return true;
  }

  onComplete(): void {
    this.release();
    this.t.completed(this);
  }

  onError(err: Error): void {
    this.release();
    this.t.errored(this, err);
  }

  /** Its connection is free again (once: undici ends a request with one of the two calls above). */
  private release(): void {
    const c = this.client;
    this.client = undefined;
    if (c !== undefined) this.t.clients?.release(c);
  }

  cancel(): void {
    this.cancelled = true;
    this.abortFn?.(CANCELLED);
  }
}

/**
 * Leaf attempts over real HTTP: each `submit` is one `POST` through an undici `Client`'s
 * `dispatch` with a handler, on a connection of a `ClientSet` (the lowest layer undici has; its
 * `request` adds a promise, a body stream and an abort signal per request, a quarter of the
 * driver's time at load-tool rates, and a `Pool` scans its clients per request):
 * OpenAI chat completions by default, Anthropic messages with `api: 'anthropic'`, SSE streams
 * with `stream: true`. The answer comes back to the listener as the simulator's upstream gives
 * it — (status, detail, tokens, retry-after ms) — always asynchronously:
 *
 *   200                  tokens from the usage (`total_tokens`, or Anthropic's input + output); a body
 *                        that breaks off, or a stream with an error event or no end marker, is `MidStream`
 *                        (a layer's own stream without its end marker: `MissingDone` or `Cut`, `streamDetail`)
 *   429                  `RateLimitRequests` / `RateLimitTokens` / `InsufficientQuota` from the body,
 *                        the wait from `retry-after-ms` or `retry-after`
 *   503, 529             `Overloaded`
 *   400 context length   `ContextLength`
 *   no HTTP answer       status 0 (`Reset`): refused, reset, socket errors
 *
 * A cancelled request (the caller timed out) is aborted, which closes its connection as a
 * client that gives up does; nothing is delivered for it afterwards and its id may be reused
 * at once. Requests that find every connection busy wait for one: `samplePool()` measures
 * that wait (connection-pool starvation: callers queue for a socket, not for the upstream).
 */
export class HttpTransport implements LeafTransport {
  private readonly o: typeof HTTP_TRANSPORT_DEFAULTS;
  /** The connections (undefined before `open`). */
  clients: ClientSet | undefined;
  private wire: WireFormat | undefined;

  /** The provider API the run speaks (its streams are read in that dialect until they show their own). */
  get api(): LiveApi {
    return this.o.api;
  }
  private readonly attempts: Array<Attempt | undefined> = [];
  private readonly stats: ModelStats[];
  private readonly headers: Record<string, string>;
  private inFlight = 0;
  private samples = 0;
  private pendingSum = 0;
  private maxPending = 0;
  private requestErrors = 0;
  private closed = false;
  /** Whether requests ask for SSE streams. */
  readonly stream: boolean;
  /** Requests written whole to the target: attempts, less those given up on before they left (waiting for a connection). */
  written = 0;
  /** HTTP answers so far, and those that were refusals (4xx but 408, 429 and context length). */
  answers = 0;
  refusals = 0;
  /** The first refusal: its status and what its body said (`error.message`), for the line that stops a run. */
  firstRefusal: { status: number; message: string } | undefined = undefined;
  /** Requests that got no HTTP answer, by error code (`ECONNREFUSED`, `UND_ERR_SOCKET`). */
  readonly errorCodes = new Map<string, number>();
  /** What a listener threw (a bug in the caller); the request is over either way. */
  onError: (err: unknown) => void = () => {};

  constructor(
    private readonly models: readonly string[],
    private readonly listener: UpstreamListener,
    /** The caller's timeline (the live run's scheduler): what `onStream`, `onResponse` and `lastEventAt` are told. */
    readonly now: () => number,
    options: HttpTransportOptions = {},
  ) {
    this.o = {
      ...HTTP_TRANSPORT_DEFAULTS,
      ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
    };
    if (!Number.isInteger(this.o.connections) || this.o.connections < 1)
      throw new RangeError(`connections must be a positive integer, got ${this.o.connections}`);
    this.stream = this.o.stream;
    this.headers = lowerKeys(this.o.headers);
    this.stats = models.map((name) => ({
      name,
      busy: 0,
      queued: 0,
      attempts: 0,
      byStatus: {},
      byDetail: {},
      tokensServed: 0,
      wastedTokens: 0,
      cancelled: 0,
    }));
  }

  /**
   * Points the transport at `target` (`http://host:port`, optionally with a path prefix; a
   * prefix ending in `/v1` is not given a second one). Call once, before the first `submit`.
   */
  open(target: string): void {
    const url = new URL(target);
    this.wire = new WireFormat(this.o.api, this.models, url.pathname.replace(/\/+$/, ''), this.headers);
    this.clients = new ClientSet(url.origin, this.o.connections, { pipelining: 1, headersTimeout: 0, bodyTimeout: 0 });
  }

  modelIndex(name: string): number {
    return this.models.indexOf(name);
  }

  /**
   * `flags`: `RequestFlag.Stream` asks this request for a stream (a layer's own `stream`, as
   * the simulator takes it), tells the listener its first token (`onStream`) and keeps when
   * the stream last moved (`lastEventAt`).
   */
  submit(reqId: number, model: number, promptTokens: number, maxOutputTokens: number, _now: number, flags = 0): void {
    const clients = this.clients;
    const wire = this.wire;
    if (clients === undefined || wire === undefined) throw new Error('HttpTransport.submit before open()');
    const told = (flags & RequestFlag.Stream) !== 0;
    const streamed = told || this.stream;
    const a = new Attempt(this, reqId, model, promptTokens, streamed, told);
    this.attempts[reqId] = a;
    this.inFlight++;
    const m = this.stats[model];
    m.attempts++;
    m.busy++;
    clients.dispatch(
      {
        path: wire.path,
        method: 'POST',
        headers: wire.headers,
        body: wire.body(model, promptTokens, maxOutputTokens, streamed),
      },
      a,
    );
  }

  cancel(reqId: number, _now: number): void {
    const a = this.attempts[reqId];
    if (a === undefined) return;
    this.forget(a);
    this.stats[a.model].cancelled++;
    a.cancel();
  }

  /** Aborts every request in flight; nothing more is delivered. */
  abortAll(): void {
    for (let id = 0; id < this.attempts.length; id++) {
      const a = this.attempts[id];
      if (a !== undefined) {
        this.forget(a);
        a.cancel();
      }
    }
  }

  /** Requests sent and not yet answered or cancelled. */
  get active(): number {
    return this.inFlight;
  }

  /** Samples how many requests wait for a connection now (queued for one, or on one not yet written). */
  samplePool(): number {
    if (this.clients === undefined || this.closed) return 0;
    const pending = this.clients.pending;
    this.samples++;
    this.pendingSum += pending;
    if (pending > this.maxPending) this.maxPending = pending;
    return pending;
  }

  figures(): LiveFigures {
    return {
      poolConnections: this.o.connections,
      maxPending: this.maxPending,
      meanPending: this.samples > 0 ? this.pendingSum / this.samples : 0,
      requestErrors: this.requestErrors,
    };
  }

  /** The upstream as this client sees it: requests in flight per model (`busy`), answers by status. */
  upstreamStats(): UpstreamStats {
    return { models: this.stats.map((m) => ({ ...m, byStatus: { ...m.byStatus }, byDetail: { ...m.byDetail } })) };
  }

  /** Aborts what is in flight and closes every connection. */
  async close(): Promise<void> {
    this.abortAll();
    if (this.closed) return;
    this.closed = true;
    await this.clients?.destroy();
  }

  /**
   * When the stream of request `reqId` (one submitted with `RequestFlag.Stream`) last brought a
   * chunk, from its first token on; -1 before its first token, or for no request in flight. HTTP
   * shows a stall only as silence, so the interpreter's idle watch asks this when it is due
   * rather than being told of every chunk.
   */
  lastEventAt(reqId: number): number {
    return this.attempts[reqId]?.lastAt ?? -1;
  }

  /** The stream of `a` brought its first content token (called by its handler). */
  firstToken(a: Attempt): void {
    if (this.attempts[a.reqId] !== a) return; // cancelled: the caller has moved on
    const now = this.now();
    a.lastAt = now;
    try {
      this.listener.onStream?.(a.reqId, StreamEvent.FirstToken, 0, 0, now);
    } catch (err) {
      this.onError(err);
    }
  }

  /** The answer of `a` is complete (called by its handler): a stream that closed cleanly is read by `streamDetail`. */
  completed(a: Attempt): void {
    if (this.attempts[a.reqId] !== a) return; // cancelled: the caller has moved on
    const status = a.status;
    if (status === 200) {
      const scan = a.scan;
      if (scan === undefined) return this.deliver(a, 200, Detail.None, usageTokens(a.text), -1);
      const detail = streamDetail(scan, a.told);
      const tokens =
        detail === Detail.None || detail === Detail.MissingDone ? Math.max(0, scan.tokens()) : a.promptTokens;
      return this.deliver(a, 200, detail, tokens, -1);
    }
    const body = parseJson(a.text);
    const detail = detailOf(status, body);
    this.answers++;
    if (isRefusal(status, detail)) {
      this.refusals++;
      this.firstRefusal ??= { status, message: errorMessage(body, a.text) };
    }
    const retry = a.rawHeaders === undefined ? undefined : parseRetryAfter(headerPairs(a.rawHeaders), Date.now());
    this.deliverAnswered(a, status, detail, 0, retry === undefined ? -1 : retry);
  }

  /** `a` failed: no HTTP answer, or one that broke off after its status (called by its handler). */
  errored(a: Attempt, err: Error): void {
    if (this.attempts[a.reqId] !== a) return; // aborted by cancel(): the caller has moved on
    if (a.status !== 0) {
      // The body broke off after the status: a 200 cut short, or an error answer that did not finish.
      const mid = a.status === 200;
      return this.deliver(a, a.status, mid ? Detail.MidStream : Detail.Reset, mid ? a.promptTokens : 0, -1);
    }
    this.requestErrors++;
    const code = String((err as { code?: unknown }).code ?? err.name ?? 'Error');
    this.errorCodes.set(code, (this.errorCodes.get(code) ?? 0) + 1);
    this.deliverAnswered(a, 0, Detail.Reset, 0, -1);
  }

  private forget(a: Attempt): void {
    this.attempts[a.reqId] = undefined;
    this.inFlight--;
    this.stats[a.model].busy--;
  }

  private deliver(a: Attempt, status: number, detail: number, tokens: number, retryAfterMs: number): void {
    this.answers++;
    this.deliverAnswered(a, status, detail, tokens, retryAfterMs);
  }

  private deliverAnswered(a: Attempt, status: number, detail: number, tokens: number, retryAfterMs: number): void {
    const m = this.stats[a.model];
    this.forget(a);
    m.byStatus[status] = (m.byStatus[status] ?? 0) + 1;
    const name = DETAIL_NAMES[detail];
    m.byDetail[name] = (m.byDetail[name] ?? 0) + 1;
    if (status === 200) m.tokensServed += tokens;
    try {
      this.listener.onResponse(a.reqId, status, detail, tokens, retryAfterMs, this.now());
    } catch (err) {
      this.onError(err);
    }
  }
}

/**
 * The detail of a stream that closed cleanly. Any stream with an error event is `MidStream`. A
 * layer's own stream (`told`) is read as the simulator's upstream reports it, so its callers
 * judge it as they do there: closed after its finish without the end marker is `MissingDone`
 * (complete), closed with neither is `Cut` (a plain caller takes it as an answer, the engine
 * does not). A stream asked for by `stream: true` alone keeps the plain rule: no end marker,
 * `MidStream`.
 */
function streamDetail(scan: StreamScan, told: boolean): number {
  if (scan.errored) return Detail.MidStream;
  if (scan.ended) return Detail.None;
  if (!told) return Detail.MidStream;
  return scan.finished ? Detail.MissingDone : Detail.Cut;
}

/** `error.message` of a provider-shaped error body, else the start of the text. */
function errorMessage(body: unknown, text: string): string {
  const error = typeof body === 'object' && body !== null ? (body as { error?: unknown }).error : undefined;
  const message =
    typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : (error ?? undefined);
  const m = typeof message === 'string' ? message : text.trim();
  return m.length > 160 ? `${m.slice(0, 157)}...` : m;
}

/** Whether raw headers say `content-type: text/event-stream` (a gateway may answer a stream request with JSON). */
function isEventStream(raw: Buffer[]): boolean {
  for (let i = 0; i + 1 < raw.length; i += 2)
    if (raw[i].length === 12 && raw[i].toString('latin1').toLowerCase() === 'content-type')
      return raw[i + 1].includes('event-stream');
  return false;
}

/** undici's raw headers (name, value, name, value, …) as the lower-case map `parseRetryAfter` reads. */
function headerPairs(raw: Buffer[]): Record<string, string> {
  const h: Record<string, string> = {};
  for (let i = 0; i + 1 < raw.length; i += 2)
    h[raw[i].toString('latin1').toLowerCase()] = raw[i + 1].toString('latin1');
  return h;
}

function lowerKeys(h: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
}
