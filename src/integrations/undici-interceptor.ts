import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { ShedError } from '../engine/errors.js';
import type { AttemptContext, Guard } from '../engine/guard.js';
import { header as headerOf, type HeaderSource } from '../engine/headers.js';
import {
  attemptWaits,
  createHttpGuard,
  targetOrigin,
  type EngineHttpOptions,
  type HttpGuard,
  type HttpRequestInfo,
} from './engine-http-options.js';
import { prepareBody, type PreparedBody } from './request-body.js';
import { estimateRequestTokens, isStreamRequest, readJsonBody, requestKeys } from './request-estimate.js';
import { publicShedError, shedAnswer } from './shed-answer.js';
import { providerOfPath } from './stream-event.js';
import { targetRequest } from './target-request.js';
import {
  AttemptHandler,
  OuterController,
  type AttemptSetup,
  type CommitSink,
  type UndiciAnswer,
} from './undici-attempt.js';

/** The interceptor, with the guard behind it (for `subscribe`, `snapshot`). */
export type StormlabInterceptor = Dispatcher.DispatcherComposeInterceptor & { readonly guard: Guard };

/**
 * An undici interceptor that runs every request through one engine `Guard`:
 *
 *   const agent = new Agent().compose(stormlab({ targets: ['https://a', 'https://b'] }));
 *
 * Each request reserves its token estimate (from a JSON body's messages and max_tokens), is
 * sent to the first available target origin, and its answer is buffered, classified from
 * status + headers + body, and either retried (honouring `retry-after(-ms)`), moved to the next
 * origin, or replayed to the caller. Reservations are reconciled from the answer's `usage`.
 *
 * Streaming (`"stream": true` bodies, `text/event-stream` answers): a 2xx is passed on as it
 * arrives, so it is never retried once its first byte is out (errors before that still are);
 * its usage is read from the final usage event if the stream has one (OpenAI needs
 * `stream_options.include_usage`), else the reservation stands as the estimate. The attempt
 * lasts until the stream ends, so `attemptTimeoutMs` and deadlines cover the whole stream.
 *
 * A local refusal (breaker, throttle, budget, limits, deadline) is answered as `guardedFetch`
 * answers it (`shedAnswers`): a synthetic 429 or 503 with `retry-after-ms`, `x-should-retry:
 * false`, `x-stormlab-shed` and the reason in the provider's error shape.
 *
 * Requests to origins outside `targets`, and upgrades/CONNECT, pass through unguarded.
 */
export function stormlab(options: EngineHttpOptions = {}): StormlabInterceptor {
  // It does not continue broken streams yet: a target's continuation is refused, not ignored.
  const h = createHttpGuard(options, false);
  const interceptor = (dispatch: Dispatcher.Dispatch): Dispatcher.Dispatch =>
    function guardedDispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
      if (opts.upgrade || opts.method === 'CONNECT') return dispatch(opts, handler);
      const origin = opts.origin === undefined ? undefined : targetOrigin(h, opts.origin);
      if (h.origins !== undefined && origin === undefined) return dispatch(opts, handler);
      new GuardedRequest(h, dispatch, opts, handler).start();
      return true;
    };
  return Object.assign(interceptor, { guard: h.guard });
}

/** An unguarded request (too large to replay) has no waits of ours. */
const UNGUARDED = Object.freeze({ headersMs: Infinity, firstTokenMs: Infinity, idleMs: Infinity });

/** One request through the guard: its attempts, and what the caller's handler is told. */
class GuardedRequest implements CommitSink {
  private readonly ac = new AbortController();
  private readonly outer: OuterController;
  /** The controller of a committed (streaming) attempt, which takes the caller's pause/resume. */
  private live: Dispatcher.DispatchController | undefined = undefined;
  private current: AttemptHandler | undefined = undefined;
  private replaying: { answer: UndiciAnswer; next: number } | undefined = undefined;
  private finished = false;

  constructor(
    private readonly h: HttpGuard,
    private readonly dispatch: Dispatcher.Dispatch,
    private readonly opts: Dispatcher.DispatchOptions,
    private readonly handler: Dispatcher.DispatchHandler,
  ) {
    this.outer = new OuterController({
      onAbort: (reason) => this.onAbort(reason),
      onPause: () => {
        this.current?.setPaused(true);
        this.live?.pause();
      },
      onResume: () => {
        this.current?.setPaused(false);
        if (this.live) this.live.resume();
        else if (this.replaying) queueMicrotask(() => this.pump());
      },
    });
  }

  start(): void {
    try {
      this.handler.onRequestStart?.(this.outer, undefined);
    } catch (err) {
      return this.fail(err);
    }
    if (this.outer.aborted) return this.fail(this.outer.reason);
    let prepared: PreparedBody | Promise<PreparedBody>;
    try {
      prepared = prepareBody(this.opts.body, this.h.maxBufferedRequestBytes);
    } catch (err) {
      return this.fail(err);
    }
    if (prepared instanceof Promise)
      prepared.then(
        (p) => this.run(p),
        (err: unknown) => this.fail(err),
      );
    else this.run(prepared);
  }

  private run(prepared: PreparedBody): void {
    if (this.outer.aborted) return this.fail(this.outer.reason);
    if (prepared.kind === 'oversize') {
      // Cannot be replayed: sent once, unguarded, every byte of the answer passed straight on.
      this.attempt(undefined, prepared.body, true).then(
        (a) => (a.committed ? undefined : this.replay(a)),
        (err: unknown) => this.fail(err),
      );
      return;
    }
    const json = readJsonBody(prepared.text);
    const tokens = estimateRequestTokens(json, this.h.estimator);
    const keys = requestKeys(this.h, this.info(json));
    const streaming = isStreamRequest(json);
    this.h.guard
      .run((ctx) => this.attempt(ctx, prepared.body, streaming, json), {
        tokens,
        keys,
        signal: this.ac.signal,
        classify: (a) => a.result,
        usage: (a) => a.usage,
      })
      .then(
        (answer) => (answer.committed ? undefined : this.replay(answer)),
        (err: unknown) => (err instanceof ShedError && this.h.shedAnswers ? this.shed(err) : this.fail(err)),
      );
  }

  /** A local refusal as the answer guardedFetch gives: a 429/503 in the provider's shape that SDKs do not retry. */
  private shed(err: ShedError): void {
    if (this.outer.aborted) return this.fail(this.outer.reason);
    const a = shedAnswer(err, providerOfPath(this.opts.path));
    const body = Buffer.from(a.body);
    const headers: IncomingHttpHeaders = { ...a.headers, 'content-length': String(body.length) };
    const message = a.status === 429 ? 'Too Many Requests' : 'Service Unavailable';
    this.replay({
      committed: false,
      status: a.status,
      headers,
      statusMessage: message,
      chunks: [body],
      trailers: {},
      result: { status: a.status },
      usage: undefined,
    });
  }

  private attempt(
    ctx: AttemptContext | undefined,
    body: unknown,
    streaming: boolean,
    json?: unknown,
  ): Promise<UndiciAnswer> {
    const signal = ctx?.signal;
    // The attempt's signal follows the caller's only from when the attempt starts.
    if (this.ac.signal.aborted) return Promise.reject(this.ac.signal.reason);
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<UndiciAnswer>((resolve, reject) => {
      const onAbort = (): void => ah.abort(signal!.reason as Error);
      const done =
        <T>(fn: (v: T) => void) =>
        (v: T): void => {
          signal?.removeEventListener('abort', onAbort);
          this.current = undefined;
          fn(v);
        };
      const ah = new AttemptHandler(
        this,
        streaming || ctx === undefined,
        this.setup(ctx, streaming),
        done(resolve),
        done(reject),
      );
      this.current = ah;
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        this.dispatch(
          ctx === undefined
            ? { ...this.opts, body: body as Dispatcher.DispatchOptions['body'] }
            : this.forTarget(ctx, body, json),
          ah,
        );
      } catch (err) {
        ah.onResponseError(undefined as never, err as Error);
      }
    });
  }

  /** Timers, the stream guard and the added headers of one attempt (none for an unguarded one). */
  private setup(ctx: AttemptContext | undefined, streaming: boolean): AttemptSetup {
    const h = this.h;
    if (ctx === undefined) return { clock: h.guard.clock, waits: UNGUARDED, stream: undefined, extraHeaders: {} };
    return {
      clock: h.guard.clock,
      waits: attemptWaits(h, ctx.target, streaming && h.stream !== undefined),
      stream:
        h.stream === undefined
          ? undefined
          : { options: h.stream, provider: providerOfPath(this.opts.path), malformed: () => ctx.malformed() },
      extraHeaders: { 'x-stormlab-target': ctx.targetName },
    };
  }

  /** The dispatch options for the attempt's target: origin, model, `rewrite`; from the original each time. */
  private forTarget(ctx: AttemptContext, body: unknown, json: unknown): Dispatcher.DispatchOptions {
    const { origin, path, method } = this.opts;
    const own = String(origin ?? '').replace(/\/$/, '');
    const t = targetRequest(ctx.target, own + path, path, method, json, () => plainHeaders(this.opts.headers));
    if (t.body === undefined && t.headers === undefined && ctx.target.origin === undefined)
      return { ...this.opts, body: body as Dispatcher.DispatchOptions['body'] };
    const url = new URL(t.url);
    let headers = t.headers ?? this.opts.headers;
    // A new body has a new length: let undici count it.
    if (t.body !== undefined) headers = withoutLength(headers);
    return {
      ...this.opts,
      origin: url.origin,
      path: url.pathname + url.search,
      headers,
      body: (t.body ?? body) as Dispatcher.DispatchOptions['body'],
    };
  }

  private info(json: unknown): HttpRequestInfo {
    const { method, origin, path, headers } = this.opts;
    return { method, url: `${String(origin ?? '')}${path}`, json, header: (name) => requestHeader(headers, name) };
  }

  // ---- CommitSink: a streamed answer goes to the caller as it arrives -------------------------

  callerAborted(): boolean {
    return this.ac.signal.aborted;
  }

  error(err: Error): void {
    this.live = undefined;
    this.fail(err);
  }

  end(trailers: IncomingHttpHeaders): void {
    this.live = undefined;
    if (this.finished) return;
    this.finished = true;
    try {
      this.handler.onResponseEnd?.(this.outer, trailers);
    } catch (err) {
      this.handler.onResponseError?.(this.outer, err as Error);
    }
  }

  data(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.finished) return;
    try {
      this.handler.onResponseData?.(this.outer, chunk);
    } catch (err) {
      controller.abort(err as Error);
    }
  }

  commit(
    controller: Dispatcher.DispatchController,
    status: number,
    headers: IncomingHttpHeaders,
    message: string | undefined,
  ): void {
    this.live = controller;
    this.outer.rawHeaders = controller.rawHeaders;
    if (this.outer.paused) controller.pause();
    try {
      this.handler.onResponseStart?.(this.outer, status, headers, message);
    } catch (err) {
      controller.abort(err as Error);
    }
  }

  // ---- the end of the call -----------------------------------------------------------------------

  private replay(answer: UndiciAnswer): void {
    if (this.finished) return;
    try {
      this.handler.onResponseStart?.(this.outer, answer.status, answer.headers, answer.statusMessage);
    } catch (err) {
      return this.fail(err);
    }
    this.replaying = { answer, next: 0 };
    this.pump();
  }

  /** Hands the buffered chunks to the caller while it is not paused, then ends. */
  private pump(): void {
    const r = this.replaying;
    if (r === undefined || this.finished) return;
    const { chunks, trailers } = r.answer;
    try {
      while (r.next < chunks.length) {
        if (this.outer.paused || this.outer.aborted) return;
        const chunk = chunks[r.next++];
        if (this.opts.method !== 'HEAD' && chunk.length > 0) this.handler.onResponseData?.(this.outer, chunk);
      }
      if (this.outer.paused || this.outer.aborted) return;
      this.replaying = undefined;
      this.finished = true;
      this.handler.onResponseEnd?.(this.outer, trailers);
    } catch (err) {
      this.replaying = undefined;
      this.finished = false;
      this.fail(err);
    }
  }

  private onAbort(reason: Error): void {
    this.ac.abort(reason);
    this.current?.abort(reason);
    if (this.replaying !== undefined) {
      this.replaying = undefined;
      this.fail(reason);
    }
  }

  private fail(err: unknown): void {
    if (this.finished) return;
    this.finished = true;
    // A refusal reaches the caller without the engine's last attempt outcome as its cause.
    const e = err instanceof ShedError ? publicShedError(err) : err;
    this.handler.onResponseError?.(this.outer, e instanceof Error ? e : new Error(String(e)));
  }
}

/** A request header from any of undici's header shapes (object, flat array, iterable of pairs). */
function requestHeader(headers: Dispatcher.DispatchOptions['headers'], name: string): string | undefined {
  if (headers == null) return undefined;
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) {
      if (String(headers[i]).toLowerCase() === name) return scalar(headers[i + 1]);
    }
    return undefined;
  }
  if (typeof (headers as { get?: unknown }).get === 'function') return headerOf(headers as HeaderSource, name);
  if (typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function') {
    for (const [k, v] of headers as Iterable<[string, string | string[] | undefined]>)
      if (k.toLowerCase() === name) return scalar(v);
    return undefined;
  }
  return headerOf(headers as HeaderSource, name);
}

function scalar(v: unknown): string | undefined {
  const first: unknown = Array.isArray(v) ? v[0] : v;
  return first == null ? undefined : String(first);
}

/** Request headers of any undici shape as a plain object with lower-case names. */
function plainHeaders(headers: Dispatcher.DispatchOptions['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers == null) return out;
  const put = (k: unknown, v: unknown): void => {
    const s = scalar(v);
    if (s !== undefined) out[String(k).toLowerCase()] = s;
  };
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) put(headers[i], headers[i + 1]);
  } else if (typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function') {
    for (const [k, v] of headers as Iterable<[string, unknown]>) put(k, v);
  } else {
    for (const [k, v] of Object.entries(headers)) put(k, v);
  }
  return out;
}

function withoutLength(headers: Dispatcher.DispatchOptions['headers']): Record<string, string> {
  const out = plainHeaders(headers);
  delete out['content-length'];
  return out;
}
