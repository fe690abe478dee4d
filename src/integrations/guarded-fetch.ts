import type { AttemptResult } from '../engine/classify.js';
import type { AttemptContext, Guard } from '../engine/guard.js';
import { createHttpGuard, targetOrigin, type EngineHttpOptions, type HttpRequestInfo } from './engine-http-options.js';
import { fetchRequest, inputUrl, type FetchRequest } from './fetch-body.js';
import { answerResult, brokenStreamResult, MAX_ERROR_BODY_BYTES } from './http-answer.js';
import { estimateRequestTokens, isStreamRequest, readJsonBody, requestKeys } from './request-estimate.js';
import { SseUsage, usageFromBody } from './response-usage.js';
import { readUpTo, tapStream, type TapEnd } from './tap-stream.js';

/** A guarded `fetch`, with the guard behind it (for `subscribe`, `snapshot`). */
export type GuardedFetch = typeof fetch & { readonly guard: Guard };

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
 * final Response — the final error Response too, when the guard gives up on an error answer,
 * so the SDK raises its own APIError — and rejects with a `ShedError` when the engine refuses
 * locally (the OpenAI SDK wraps it: `APIConnectionError` with the ShedError as `cause`).
 *
 * Usage reconciles from a JSON answer's `usage`. A streamed answer (`"stream": true`, or
 * `text/event-stream`) is returned as soon as its 2xx headers arrive and is never retried
 * after that; its usage comes from the final usage event if there is one, and the attempt
 * (its concurrency slot, its timeout) lasts until the body is read to the end or cancelled.
 */
export function guardedFetch(options: GuardedFetchOptions = {}): GuardedFetch {
  const { fetch: own, ...rest } = options;
  const base: typeof fetch = own ?? ((input, init) => globalThis.fetch(input, init));
  const h = createHttpGuard(rest);

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
    const call = new FetchCall(base, req, isStreamRequest(json), h.origins === undefined ? undefined : pathOf(url));
    const run = h.guard.run((ctx) => call.attempt(ctx), {
      tokens: estimateRequestTokens(json, h.estimator),
      keys: requestKeys(h, info),
      signal: req.init.signal ?? undefined,
      classify: (a) => a.result,
      usage: (a) => a.usage,
    });
    const final = run.then(
      (a) => a.response,
      (err: unknown) => {
        call.discard();
        throw err;
      },
    );
    return Promise.race([call.committed, final]);
  };
  return Object.assign(guarded, { guard: h.guard }) as GuardedFetch;
}

/** The attempts of one guarded fetch. */
class FetchCall {
  /** Resolves with the Response of a streamed answer as soon as its 2xx headers are in. */
  readonly committed: Promise<Response>;
  private commit!: (r: Response) => void;
  private last: Response | undefined = undefined;

  constructor(
    private readonly base: typeof fetch,
    private readonly req: FetchRequest,
    private readonly streaming: boolean,
    /** Path + query to put behind each target origin; undefined when targets are not origins. */
    private readonly path: string | undefined,
  ) {
    this.committed = new Promise((resolve) => (this.commit = resolve));
  }

  async attempt(ctx: AttemptContext): Promise<FetchAnswer> {
    this.discard();
    // The attempt's signal follows the caller's only from when the attempt starts.
    this.req.init.signal?.throwIfAborted();
    const url = this.path === undefined ? this.req.url : ctx.targetName + this.path;
    const res = await this.base(url, { ...this.req.init, signal: ctx.signal ?? this.req.init.signal });
    this.last = res;
    const { status, headers } = res;
    if (status < 200 || status >= 300)
      return { response: res, result: answerResult(status, headers, await errorBody(res)), usage: undefined };
    if (res.body !== null && (this.streaming || (headers.get('content-type') ?? '').startsWith('text/event-stream'))) {
      this.last = undefined;
      return this.stream(ctx, res);
    }
    const body = res.body === null ? undefined : new Uint8Array(await res.clone().arrayBuffer());
    return {
      response: res,
      result: answerResult(status, headers, body),
      usage: body === undefined ? undefined : usageFromBody(body),
    };
  }

  /** Frees the body of an answer the guard did not keep (a retried or shed attempt). */
  discard(): void {
    const prev = this.last;
    this.last = undefined;
    if (prev?.body && !prev.bodyUsed) prev.body.cancel().catch(() => {});
  }

  /** Hands the stream to the caller now; the attempt ends when the stream does. */
  private stream(ctx: AttemptContext, res: Response): Promise<FetchAnswer> {
    return new Promise((resolve) => {
      const sse = new SseUsage();
      const { status, headers } = res;
      const onEnd = (end: TapEnd): void => {
        if (end.how !== 'error') return resolve({ response: res, result: { status, headers }, usage: sse.total() });
        const timedOut = ctx.signal?.aborted === true && this.req.init.signal?.aborted !== true;
        const error = timedOut ? (ctx.signal!.reason as unknown) : end.error;
        resolve({
          response: res,
          result: brokenStreamResult(error, this.req.init.signal?.aborted === true),
          usage: undefined,
        });
      };
      const body = tapStream(res.body!, (chunk) => sse.push(chunk), onEnd);
      this.commit(new Response(body, { status, statusText: res.statusText, headers }));
    });
  }
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
