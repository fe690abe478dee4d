import { Pool, type Dispatcher } from 'undici';
import { parseRetryAfter } from '../../engine/retry-after.js';
import type { LeafTransport } from '../../traffic/observer.js';
import type { LiveFigures } from '../metrics/result.js';
import { Detail, DETAIL_NAMES, type UpstreamListener } from '../../upstream/response.js';
import type { ModelStats, UpstreamStats } from '../../upstream/upstream-model.js';

export const HTTP_TRANSPORT_DEFAULTS = {
  /** Connections of the undici pool; requests past them wait for one. @default 256 */
  connections: 256,
  /** Extra request headers (`authorization`, a gateway's routing key). @default none */
  headers: {} as Readonly<Record<string, string>>,
};

export type HttpTransportOptions = Partial<typeof HTTP_TRANSPORT_DEFAULTS>;

/** A prompt of `promptTokens` as the fake upstream counts it: ceil(chars / 3) + 4 per message. */
const CHARS_PER_TOKEN = 3;
const MESSAGE_OVERHEAD = 4;
let filler = 'the storm passes when retries stay within their budget and every layer keeps its calm. ';

/** The filler text of a prompt of `promptTokens` (plain words: nothing to escape in JSON). */
function promptText(promptTokens: number): string {
  const chars = Math.max(0, promptTokens - MESSAGE_OVERHEAD) * CHARS_PER_TOKEN;
  while (filler.length < chars) filler += filler;
  return filler.slice(0, chars);
}

/** The reason undici is given when a request is cancelled: one error, not a stack per cancel. */
const CANCELLED = Object.freeze(
  Object.assign(new Error('the caller gave up on this request'), { name: 'AbortError', code: 'STORMLAB_CANCELLED' }),
);

/**
 * What `cancel` aborts a request through: the EventEmitter-shaped signal undici also takes
 * (`aborted`, `reason`, `once`/`removeListener` of one listener). An `AbortController` per
 * request costs an EventTarget and its listener bookkeeping, several per cent of the driver's
 * time per request at tens of thousands of requests a second; this is a plain object.
 */
class CancelSignal {
  aborted = false;
  reason: unknown = undefined;
  private listener: (() => void) | undefined = undefined;

  on(_event: 'abort', listener: () => void): this {
    this.listener = listener;
    return this;
  }

  once(event: 'abort', listener: () => void): this {
    return this.on(event, listener);
  }

  removeListener(): this {
    this.listener = undefined;
    return this;
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = CANCELLED;
    const l = this.listener;
    this.listener = undefined;
    l?.();
  }
}

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

const TOTAL_TOKENS = '"total_tokens":';

/**
 * `usage.total_tokens` of a completion's JSON text. The usage is all a 200 is read for, so
 * the number is picked out of the text where it is plainly there (the common case, a tenth
 * of the cost of parsing the whole completion), and the body parsed only otherwise.
 */
function totalTokens(text: string): number {
  const at = text.lastIndexOf(TOTAL_TOKENS);
  if (at >= 0) {
    const n = Number.parseInt(text.slice(at + TOTAL_TOKENS.length, at + TOTAL_TOKENS.length + 24).trimStart(), 10);
    if (n >= 0) return n;
  }
  return usageOf(parseJson(text));
}

/** `usage.total_tokens` of a completion (or prompt + completion tokens), 0 when it says none. */
function usageOf(body: unknown): number {
  const usage = typeof body === 'object' && body !== null ? (body as { usage?: unknown }).usage : undefined;
  if (typeof usage !== 'object' || usage === null) return 0;
  const u = usage as Record<string, unknown>;
  if (typeof u.total_tokens === 'number') return u.total_tokens;
  const n = (v: unknown): number => (typeof v === 'number' ? v : 0);
  return n(u.prompt_tokens) + n(u.completion_tokens) + n(u.input_tokens) + n(u.output_tokens);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Leaf attempts over real HTTP: each `submit` is one `POST {target}/v1/chat/completions`
 * (OpenAI's shape, not streamed) through an undici `Pool`, cancellable through its own
 * signal. The answer comes back to the listener as the simulator's upstream gives
 * it — (status, detail, tokens, retry-after ms) — always asynchronously:
 *
 *   200                  tokens from `usage.total_tokens`; a body that breaks off is `MidStream`
 *   429                  `RateLimitRequests` / `RateLimitTokens` / `InsufficientQuota` from the body,
 *                        the wait from `retry-after-ms` or `retry-after`
 *   503, 529             `Overloaded`
 *   400 context length   `ContextLength`
 *   no HTTP answer       status 0 (`Reset`): refused, reset, socket errors
 *
 * A cancelled request (the caller timed out) is aborted, which closes its connection as a
 * client that gives up does; nothing is delivered for it afterwards and its id may be reused
 * at once. Requests that find every connection busy wait in the pool: `samplePool()` measures
 * that wait (connection-pool starvation: callers queue for a socket, not for the upstream).
 */
export class HttpTransport implements LeafTransport {
  private readonly o: typeof HTTP_TRANSPORT_DEFAULTS;
  private pool: Pool | undefined;
  private path = '/v1/chat/completions';
  private readonly controllers: Array<CancelSignal | undefined> = [];
  private readonly modelJson: string[];
  private readonly modelOf: number[] = [];
  private readonly stats: ModelStats[];
  private readonly headers: Record<string, string>;
  private inFlight = 0;
  private samples = 0;
  private pendingSum = 0;
  private maxPending = 0;
  private requestErrors = 0;
  private closed = false;
  /** Requests that got no HTTP answer, by error code (`ECONNREFUSED`, `UND_ERR_SOCKET`). */
  readonly errorCodes = new Map<string, number>();
  /** What a listener threw (a bug in the caller); the request is over either way. */
  onError: (err: unknown) => void = () => {};

  constructor(
    private readonly models: readonly string[],
    private readonly listener: UpstreamListener,
    private readonly now: () => number,
    options: HttpTransportOptions = {},
  ) {
    this.o = {
      ...HTTP_TRANSPORT_DEFAULTS,
      ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
    };
    if (!Number.isInteger(this.o.connections) || this.o.connections < 1)
      throw new RangeError(`connections must be a positive integer, got ${this.o.connections}`);
    this.headers = { 'content-type': 'application/json', ...lowerKeys(this.o.headers) };
    this.modelJson = models.map((m) => JSON.stringify(m));
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
    const prefix = url.pathname.replace(/\/+$/, '');
    this.path = `${prefix}${prefix.endsWith('/v1') ? '' : '/v1'}/chat/completions`;
    this.pool = new Pool(url.origin, {
      connections: this.o.connections,
      pipelining: 1,
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  }

  modelIndex(name: string): number {
    return this.models.indexOf(name);
  }

  submit(reqId: number, model: number, promptTokens: number, maxOutputTokens: number, _now: number): void {
    const pool = this.pool;
    if (pool === undefined) throw new Error('HttpTransport.submit before open()');
    const ctl = new CancelSignal();
    this.controllers[reqId] = ctl;
    this.modelOf[reqId] = model;
    this.inFlight++;
    this.stats[model].attempts++;
    this.stats[model].busy++;
    // JSON.stringify({ model, messages: [{ role: 'user', content }], max_tokens }), without the escaping scan.
    const body = `{"model":${this.modelJson[model]},"messages":[{"role":"user","content":"${promptText(promptTokens)}"}],"max_tokens":${maxOutputTokens}}`;
    pool.request({ path: this.path, method: 'POST', headers: this.headers, body, signal: ctl }).then(
      (res) => this.read(reqId, ctl, res, promptTokens),
      (err: unknown) => this.failed(reqId, ctl, err),
    );
  }

  cancel(reqId: number, _now: number): void {
    const ctl = this.controllers[reqId];
    if (ctl === undefined) return;
    this.forget(reqId);
    this.stats[this.modelOf[reqId]].cancelled++;
    ctl.abort();
  }

  /** Aborts every request in flight; nothing more is delivered. */
  abortAll(): void {
    for (let id = 0; id < this.controllers.length; id++) {
      const ctl = this.controllers[id];
      if (ctl !== undefined) {
        this.forget(id);
        ctl.abort();
      }
    }
  }

  /** Requests sent and not yet answered or cancelled. */
  get active(): number {
    return this.inFlight;
  }

  /** Samples how many requests wait for a connection now (undici's `pending`: queued in the pool or a client, not yet written). */
  samplePool(): number {
    if (this.pool === undefined || this.closed) return 0;
    const pending = this.pool.stats.pending;
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
    await this.pool?.destroy();
  }

  private forget(reqId: number): void {
    this.controllers[reqId] = undefined;
    this.inFlight--;
    this.stats[this.modelOf[reqId]].busy--;
  }

  private async read(
    reqId: number,
    ctl: CancelSignal,
    res: Dispatcher.ResponseData,
    promptTokens: number,
  ): Promise<void> {
    const status = res.statusCode;
    let text: string;
    try {
      text = await res.body.text();
    } catch {
      // Aborted (nothing to say) or the body broke off after the status: a 200 cut short.
      if (this.controllers[reqId] !== ctl) return;
      return this.deliver(
        reqId,
        status,
        status === 200 ? Detail.MidStream : Detail.Reset,
        status === 200 ? promptTokens : 0,
        -1,
      );
    }
    if (this.controllers[reqId] !== ctl) return;
    if (status === 200) return this.deliver(reqId, 200, Detail.None, totalTokens(text), -1);
    const body = parseJson(text);
    const retry = parseRetryAfter(res.headers, Date.now());
    this.deliver(reqId, status, detailOf(status, body), 0, retry === undefined ? -1 : retry);
  }

  private failed(reqId: number, ctl: CancelSignal, err: unknown): void {
    if (this.controllers[reqId] !== ctl) return; // aborted by cancel(): the caller has moved on
    this.requestErrors++;
    const code = String((err as { code?: unknown }).code ?? (err as Error).name ?? 'Error');
    this.errorCodes.set(code, (this.errorCodes.get(code) ?? 0) + 1);
    this.deliver(reqId, 0, Detail.Reset, 0, -1);
  }

  private deliver(reqId: number, status: number, detail: number, tokens: number, retryAfterMs: number): void {
    const m = this.stats[this.modelOf[reqId]];
    this.forget(reqId);
    m.byStatus[status] = (m.byStatus[status] ?? 0) + 1;
    const name = DETAIL_NAMES[detail];
    m.byDetail[name] = (m.byDetail[name] ?? 0) + 1;
    if (status === 200) m.tokensServed += tokens;
    try {
      this.listener.onResponse(reqId, status, detail, tokens, retryAfterMs, this.now());
    } catch (err) {
      this.onError(err);
    }
  }
}

function lowerKeys(h: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
}
