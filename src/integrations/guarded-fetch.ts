import type { AttemptResult } from '../engine/classify.js';
import { ShedError } from '../engine/errors.js';
import type { AttemptContext, Guard } from '../engine/guard.js';
import { StreamGuard } from '../engine/stream-guard.js';
import { AttemptTimers } from './attempt-timers.js';
import {
  attemptWaits,
  createHttpGuard,
  targetOrigin,
  type EngineHttpOptions,
  type HttpGuard,
  type HttpRequestInfo,
} from './engine-http-options.js';
import { fetchRequest, inputUrl, type FetchRequest } from './fetch-body.js';
import { faultCode, GuardedStream, type StreamEnd, type StreamHooks } from './guarded-stream.js';
import { prefillBody, resumable, ResumeTap, type Resumption } from './stream-resume.js';
import { charsPerToken } from '../engine/token-estimator.js';
import type { Target } from '../engine/target.js';
import { answerResult, brokenStreamResult, MAX_ERROR_BODY_BYTES } from './http-answer.js';
import { estimateRequestTokens, isStreamRequest, readJsonBody, requestKeys } from './request-estimate.js';
import { SseUsage, usageFromBody } from './response-usage.js';
import { publicShedError, shedAnswer } from './shed-answer.js';
import { providerOfPath, type StreamProvider } from './stream-event.js';
import { StreamGate } from './stream-gate.js';
import { targetRequest } from './target-request.js';
import { readUpTo, tapStream, type TapEnd } from './tap-stream.js';

/** A guarded `fetch`, with the guard behind it (for `subscribe`, `snapshot`). */
export type GuardedFetch = typeof fetch & { readonly guard: Guard; readonly streams: StreamCounts };

/** What the stream guard has seen, for logs and tests (the engine's events count the rest). */
export interface StreamCounts {
  /** Events skipped because no client could read them. */
  malformed: number;
}

export interface GuardedFetchOptions extends EngineHttpOptions {
  /** The fetch that does the work. @default globalThis.fetch, looked up at each call */
  fetch?: typeof fetch;
}

/** One attempt's answer: the Response, what the classifier sees of it, and its usage. */
interface FetchAnswer {
  response: Response;
  result: AttemptResult;
  usage: number | undefined;
}

/**
 * A `fetch` that runs every request through one engine `Guard`, for SDKs that take a fetch:
 *
 *   new OpenAI({ baseURL, fetch: guardedFetch({ targets: [origin] }), maxRetries: 0 })
 *
 * Each request reserves its token estimate (a JSON body's messages + max_tokens), goes to the
 * first available target origin, and its answer is classified from status + headers + body
 * (error bodies are read from a clone, so the caller can still read them). Retries honour
 * `retry-after(-ms)`; quota and context-length errors move to the next origin. Resolves to the
 * final Response — the final error Response too, with `x-should-retry: false`, so the SDK
 * raises its own APIError and does not retry — and, for a local refusal, to a synthetic 429/503
 * (`shedAnswers`). Every answer says who answered in `x-stormlab-target`.
 *
 * A streamed answer (`"stream": true`, or `text/event-stream`) goes through the stream guard:
 * held until its first content token (`stream.commit`), with header, first-token and idle
 * timeouts; a cut or stall before commit is retried or failed over, one after commit ends the
 * caller's stream with an in-band error event. The attempt (its concurrency slot, its
 * deadline) lasts until the stream ends or is cancelled.
 */
export function guardedFetch(options: GuardedFetchOptions = {}): GuardedFetch {
  const { fetch: own, ...rest } = options;
  const base: typeof fetch = own ?? ((input, init) => globalThis.fetch(input, init));
  const h = createHttpGuard(rest);
  const streams: StreamCounts = { malformed: 0 };

  const guarded = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    init?.signal?.throwIfAborted();
    const url = inputUrl(input);
    const origin = h.origins === undefined ? undefined : targetOrigin(h, url);
    if (h.origins !== undefined && origin === undefined) return base(input, init);
    const req = await fetchRequest(input, init, h.maxBufferedRequestBytes);
    if (req.oversize) return base(req.url, req.init);
    const json = readJsonBody(req.text);
    const info: HttpRequestInfo = {
      method: req.init.method ?? 'GET',
      url: req.url,
      json,
      header: lazyHeaders(req.init.headers),
    };
    const path = pathOf(url);
    const call = new FetchCall(h, base, req, json, path, streams);
    const run = h.guard.run((ctx) => call.attempt(ctx), {
      tokens: estimateRequestTokens(json, h.estimator),
      keys: requestKeys(h, info),
      signal: req.init.signal ?? undefined,
      classify: (a) => a.result,
      usage: (a) => a.usage,
    });
    void run.then(
      () => call.endResume(),
      () => call.endResume(),
    );
    const final = run.then(
      (a) => a.response,
      (err: unknown) => {
        call.discard();
        if (!(err instanceof ShedError)) throw err;
        if (!h.shedAnswers) throw publicShedError(err);
        const a = shedAnswer(err, providerOfPath(path));
        return new Response(a.body, { status: a.status, headers: a.headers });
      },
    );
    return Promise.race([call.committed, final]);
  };
  return Object.assign(guarded, { guard: h.guard, streams }) as GuardedFetch;
}

/** How prefill tokens are counted without an estimator of the guard's own. */
const DEFAULT_ESTIMATOR = charsPerToken(3);

/** Whether a chat completions body asks for the usage chunk at the end of its stream. */
function includesUsage(json: unknown): boolean {
  const o = (json as { stream_options?: { include_usage?: unknown } } | null)?.stream_options;
  return o?.include_usage === true;
}

/** Headers every answer of the guard carries. */
const NO_RETRY: Record<string, string> = { 'x-should-retry': 'false' };

/** The attempts of one guarded fetch. */
class FetchCall {
  /** Resolves with the Response of a streamed answer as soon as it commits. */
  readonly committed: Promise<Response>;
  private commit!: (r: Response) => void;
  private last: Response | undefined = undefined;

  constructor(
    private readonly h: HttpGuard,
    private readonly base: typeof fetch,
    private readonly req: FetchRequest,
    private readonly json: unknown,
    /** Path + query, put behind a target's origin. */
    private readonly path: string,
    private readonly counts: StreamCounts,
  ) {
    this.committed = new Promise((resolve) => (this.commit = resolve));
    this.streaming = isStreamRequest(json);
    this.provider = providerOfPath(new URL(req.url).pathname);
  }

  private readonly streaming: boolean;
  private readonly provider: StreamProvider;

  /**
   * The attempt's URL and init for its target: origin, model, `rewrite`; from the original each
   * time — with the delivered text as a trailing assistant message while resuming.
   */
  private forTarget(ctx: AttemptContext): { url: string; init: RequestInit } {
    const init = this.req.init;
    const prefill = this.resumption === undefined ? undefined : prefillBody(this.json, this.resumption.text);
    const json = prefill ?? this.json;
    const t = targetRequest(ctx.target, this.req.url, this.path, init.method ?? 'GET', json, () =>
      Object.fromEntries(new Headers(init.headers).entries()),
    );
    const body = t.body ?? (prefill === undefined ? undefined : JSON.stringify(prefill));
    if (body === undefined && t.headers === undefined) return { url: t.url, init };
    return {
      url: t.url,
      init: {
        ...init,
        ...(body === undefined ? {} : { body }),
        ...(t.headers ? { headers: t.headers } : {}),
      },
    };
  }

  /** A broken committed stream being continued (`stream.resume`), and who waits for its continuation. */
  private resumption: Resumption | undefined = undefined;
  private continued: ((body: ReadableStream<Uint8Array> | undefined) => void) | undefined = undefined;

  /**
   * Whether a committed stream of this call, on `target`, may be continued: `stream.resume` is
   * on, the call streams chat completions or messages, and the target or one after it in the
   * chain declares `continuation: 'prefill'` (the engine goes only there).
   */
  private mayResume(target: Target): boolean {
    const sg = this.h.stream;
    if (sg === undefined || !sg.resume || sg.commit !== 'first-token' || !this.streaming) return false;
    if (this.provider === 'responses' || prefillBody(this.json, '') === undefined) return false;
    return this.h.guard.targets.some((t) => t.index >= target.index && t.continuation === 'prefill');
  }

  /**
   * The committed stream of attempt `ctx` broke (`error`) after the caller got `tap.text`: asks
   * the engine for the rest (`ctx.resume`) and gives the promise of the continuation's stream,
   * or undefined when it cannot be continued (then the break ends the caller's stream).
   */
  private resumeAfter(
    ctx: AttemptContext,
    tap: ResumeTap,
    error: unknown,
  ): Promise<ReadableStream<Uint8Array> | undefined> | undefined {
    if (!resumable(error) || !tap.textOnly || !this.mayResume(ctx.target)) return undefined;
    const prev = this.resumption;
    const estimate = (text: string) => (this.h.estimator ?? DEFAULT_ESTIMATOR).estimate(text);
    const text = (prev?.text ?? '') + tap.text;
    this.resumption = {
      provider: this.provider === 'anthropic' ? 'anthropic' : 'openai',
      text,
      error: prev?.error ?? error,
      count: (prev?.count ?? 0) + 1,
      prefillTokens: (prev?.prefillTokens ?? 0) + estimate(text),
      deliveredTokens: (prev?.deliveredTokens ?? 0) + (tap.reported >= 0 ? tap.reported : estimate(tap.text)),
      usageChunk: this.provider === 'anthropic' || includesUsage(this.json),
    };
    ctx.resume(error.kind);
    return new Promise((resolve) => (this.continued = resolve));
  }

  /** The call is over: a continuation still awaited will not come (the caller gets the break's error). */
  endResume(): void {
    const waiting = this.continued;
    this.continued = undefined;
    waiting?.(undefined);
  }

  async attempt(ctx: AttemptContext): Promise<FetchAnswer> {
    this.discard();
    // The attempt's signal follows the caller's only from when the attempt starts.
    this.req.init.signal?.throwIfAborted();
    const { url, init } = this.forTarget(ctx);
    const sg = this.h.stream;
    const waits = attemptWaits(this.h, ctx.target, sg !== undefined && this.streaming);
    const clock = this.h.guard.clock;
    const guard = new StreamGuard(
      { waits, commit: sg?.commit ?? 'first-token', resume: this.mayResume(ctx.target) },
      clock.now(),
    );
    const a = new AttemptTimers(clock, ctx.signal ?? this.req.init.signal ?? undefined, guard);
    try {
      let res: Response;
      try {
        res = await this.base(url, { ...init, signal: a.signal });
      } catch (err) {
        throw a.reason() ?? err;
      } finally {
        a.headersIn();
      }
      const target = { 'x-stormlab-target': ctx.targetName };
      const { status, headers } = res;
      const sse =
        res.body !== null && (this.streaming || (headers.get('content-type') ?? '').startsWith('text/event-stream'));
      if (status < 200 || status >= 300) {
        a.end();
        const body = await errorBody(res);
        return this.keep(
          respond(res, res.body, { ...target, ...NO_RETRY }),
          answerResult(status, headers, body),
          undefined,
        );
      }
      if (sse && sg !== undefined) return await this.guardStream(ctx, res, a, guard, target);
      if (sse) {
        a.end();
        return await this.passStream(ctx, res, target);
      }
      a.end();
      const body = res.body === null ? undefined : new Uint8Array(await res.clone().arrayBuffer());
      const usage = body === undefined ? undefined : usageFromBody(body);
      // A 2xx whose model refused (finish_reason content_filter, stop_reason refusal) is classified so.
      return this.keep(respond(res, res.body, target), answerResult(status, headers, body), usage);
    } catch (err) {
      a.end();
      throw err;
    }
  }

  /** Frees the body of an answer the guard did not keep (a retried or shed attempt). */
  discard(): void {
    const prev = this.last;
    this.last = undefined;
    if (prev?.body && !prev.bodyUsed) prev.body.cancel().catch(() => {});
  }

  private keep(response: Response, result: AttemptResult, usage: number | undefined): FetchAnswer {
    this.last = response;
    return { response, result, usage };
  }

  /**
   * The stream guard: reads until the first content token (or the end, for `commit:
   * 'complete'`), failing the attempt on a cut, a stall or a provider error event before
   * that; then hands the caller the stream and ends the attempt when the stream ends.
   */
  private async guardStream(
    ctx: AttemptContext,
    res: Response,
    a: AttemptTimers,
    guard: StreamGuard,
    target: Record<string, string>,
  ): Promise<FetchAnswer> {
    const sse = new SseUsage();
    const clock = this.h.guard.clock;
    const gate = new StreamGate(guard, this.provider, sse, () => clock.now());
    const callerAborted = (): boolean => this.req.init.signal?.aborted === true;
    // Continuing a broken stream: this attempt's events are spliced into the caller's stream.
    const splice = this.resumption;
    const tap = splice !== undefined || this.mayResume(ctx.target) ? new ResumeTap(this.provider, splice) : undefined;
    const hooks: StreamHooks =
      tap === undefined
        ? {}
        : { deliver: (parts) => tap.pass(parts), resume: (error) => this.resumeAfter(ctx, tap, error) };
    const stream = new GuardedStream(
      res.body!.getReader(),
      gate,
      a,
      callerAborted,
      () => (ctx.signal?.aborted ? ctx.signal.reason : undefined),
      hooks,
    );
    a.onStall((e) => stream.stall(e));
    a.onFinishQuiet(() => stream.finishQuiet());
    const first = await stream.untilCommit();
    const count = (): void => {
      this.counts.malformed += gate.malformed;
      for (let i = 0; i < gate.malformed; i++) ctx.malformed();
      gate.malformed = 0;
    };
    count();
    const headers = { ...target, ...NO_RETRY };
    if ('how' in first && first.how === 'refused') {
      a.end();
      // The model refused before the caller saw a token: the whole stream is the answer, classified content_filter.
      const response = respond(res, streamOf(gate.heldBytes()), headers, true);
      return this.keep(response, refusedResult(res, gate), sse.total());
    }
    if ('how' in first) {
      a.end();
      // Should the guard give up here, the caller gets what was held and an error event: never a clean end.
      const tail =
        first.how === 'failed' && first.upstream === undefined
          ? [gate.errorEvent(faultCode(first.error), `stormlab: ${messageOf(first.error)}`)]
          : [];
      const body = streamOf([...gate.heldBytes(), ...tail]);
      const response = respond(res, body, headers, true);
      return { response, result: failedResult(first, res.headers, callerAborted()), usage: undefined };
    }
    return new Promise<FetchAnswer>((resolve) => {
      let response: Response | undefined;
      let ended: FetchAnswer | undefined;
      const body = stream.body(first.first, first.complete, (end) => {
        a.end();
        count();
        const result =
          end.how === 'complete'
            ? refusedResult(res, gate)
            : end.how === 'resumed'
              ? // Continued elsewhere: a retryable break for the engine, which picks the target.
                { error: end.error, cancelled: false }
              : brokenResult(end, callerAborted());
        ended = { response: response!, result, usage: end.how === 'complete' ? sse.total() : undefined };
        if (response !== undefined) resolve(ended);
      });
      response = respond(res, body, target, true);
      const waiting = splice === undefined ? undefined : this.continued;
      if (waiting !== undefined) {
        // The caller's stream is the first attempt's: this one goes on in it.
        this.continued = undefined;
        waiting(body);
      } else this.commit(response);
      if (ended !== undefined) resolve({ ...ended, response });
    });
  }

  /** Unguarded streams (`stream: false`): handed over at their 2xx; the attempt ends with the stream. */
  private passStream(ctx: AttemptContext, res: Response, target: Record<string, string>): Promise<FetchAnswer> {
    return new Promise((resolve) => {
      const sse = new SseUsage();
      const { status, headers } = res;
      const onEnd = (end: TapEnd): void => {
        if (end.how !== 'error') return resolve({ response, result: { status, headers }, usage: sse.total() });
        const timedOut = ctx.signal?.aborted === true && this.req.init.signal?.aborted !== true;
        const error = timedOut ? (ctx.signal!.reason as unknown) : end.error;
        resolve({
          response,
          result: brokenStreamResult(error, this.req.init.signal?.aborted === true),
          usage: undefined,
        });
      };
      const response = respond(
        res,
        tapStream(res.body!, (chunk) => sse.push(chunk), onEnd),
        target,
      );
      this.commit(response);
    });
  }
}

/** The attempt result of a complete stream: a success, or `content_filter` when its finish was a refusal. */
function refusedResult(res: Response, gate: StreamGate): AttemptResult {
  const { status, headers } = res;
  return gate.refusal === undefined ? { status, headers } : { status, headers, body: gate.refusal };
}

/** The attempt result of a stream that failed before commit: retried or failed over. */
function failedResult(end: StreamEnd, headers: Headers, cancelled: boolean): AttemptResult {
  if (end.how === 'cancelled') return { error: new DOMException('cancelled', 'AbortError'), cancelled: true };
  if ('upstream' in end && end.upstream !== undefined) return answerResult(500, headers, JSON.stringify(end.upstream));
  return { error: 'error' in end ? end.error : undefined, cancelled };
}

/** The attempt result of a stream that broke after commit: the caller has the bytes, so no retry, but it counts. */
function brokenResult(end: StreamEnd, cancelled: boolean): AttemptResult {
  if (end.how === 'cancelled') return { error: new DOMException('cancelled', 'AbortError'), cancelled: true };
  if (end.how === 'broken' && end.upstream !== undefined)
    return answerResult(500, NO_RETRY, JSON.stringify(end.upstream));
  return brokenStreamResult('error' in end ? end.error : undefined, cancelled);
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function streamOf(parts: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(c) {
      for (const p of parts) c.enqueue(p);
      c.close();
    },
  });
}

const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** `res` with another body and extra headers, keeping its status, text and URL. */
function respond(
  res: Response,
  body: ReadableStream<Uint8Array> | null,
  extra: Record<string, string>,
  dropLength = false,
): Response {
  const headers = new Headers(res.headers);
  for (const k in extra) headers.set(k, extra[k]);
  if (dropLength) headers.delete('content-length');
  const out = new Response(NULL_BODY.has(res.status) ? null : body, {
    status: res.status,
    statusText: res.statusText,
    headers,
  });
  if (res.url) Object.defineProperty(out, 'url', { value: res.url });
  return out;
}

/** An error body for the classifier, read from a clone so the caller still gets the original. */
async function errorBody(res: Response): Promise<Uint8Array | undefined> {
  if (res.body === null) return undefined;
  const length = Number(res.headers.get('content-length') ?? NaN);
  if (length > MAX_ERROR_BODY_BYTES) return undefined;
  // A body that breaks while read rejects the attempt: classified as the connection error it is.
  return readUpTo(res.clone().body!, MAX_ERROR_BODY_BYTES);
}

function pathOf(url: string): string {
  const u = new URL(url);
  return u.pathname + u.search;
}

function lazyHeaders(init: RequestInit['headers']): (name: string) => string | undefined {
  let headers: Headers | undefined;
  return (name) => {
    headers ??= new Headers(init);
    return headers.get(name) ?? undefined;
  };
}
