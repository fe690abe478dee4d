import type { BreakerOutcome } from './circuit-breaker.js';
import { header, type HeaderSource } from './headers.js';
import { refusalOf } from './refusal.js';
import { parseRetryAfter } from './retry-after.js';

/** The LLM error taxonomy (ARCHITECTURE.md, "Primitives and their defaults": classification). */
export type ErrorClass =
  | 'success'
  | 'rate_limited'
  | 'quota_exhausted'
  | 'overloaded'
  | 'server_error'
  | 'timeout'
  | 'connection'
  | 'stream_cut'
  | 'stream_stall'
  | 'context_length'
  | 'content_filter'
  | 'auth'
  | 'bad_request'
  | 'not_found'
  | 'conflict'
  | 'cancelled'
  | 'unknown';

export const ERROR_CLASSES: readonly ErrorClass[] = [
  'success',
  'rate_limited',
  'quota_exhausted',
  'overloaded',
  'server_error',
  'timeout',
  'connection',
  'stream_cut',
  'stream_stall',
  'context_length',
  'content_filter',
  'auth',
  'bad_request',
  'not_found',
  'conflict',
  'cancelled',
  'unknown',
];

/** done (success) | retry (same target, later) | fallback (next target, no retry here) | fail (give up). */
export type ErrorAction = 'done' | 'retry' | 'fallback' | 'fail';

export interface Classification {
  readonly class: ErrorClass;
  readonly action: ErrorAction;
  /** What the circuit breaker records. */
  readonly breaker: BreakerOutcome;
  /** An accept for the adaptive throttle: the upstream took the work (2xx and 4xx caller errors). */
  readonly accept: boolean;
  /** False when the throttle should not count the request at all (the caller cancelled it). */
  readonly counted: boolean;
  readonly retryAfterMs?: number;
  readonly status?: number;
  /** The provider's own words, for refusals the caller must see (content filter, context length). */
  readonly reason?: string;
}

export interface AttemptResult {
  status?: number;
  headers?: HeaderSource;
  /** Parsed JSON or text; a JSON string is parsed here. */
  body?: unknown;
  /** What the attempt threw. */
  error?: unknown;
  /**
   * Whether an abort was the caller's own AbortSignal. `true` → cancelled whatever the error.
   * `false` → an AbortError came from the engine's attempt timeout → timeout. Unset → an
   * AbortError is taken as the caller's (cancelled: no retry, nothing recorded).
   */
  cancelled?: boolean;
}

type Policy = Pick<Classification, 'action' | 'breaker' | 'accept' | 'counted'>;
const policy = (action: ErrorAction, breaker: BreakerOutcome, accept: boolean, counted = true): Policy => ({
  action,
  breaker,
  accept,
  counted,
});

/**
 * Why each row: the breaker tracks the upstream's health, so only failures that are its fault
 * count against it. Caller errors (400/404/422, context length, content filter, 409) prove the
 * upstream is up and answering: breaker success, throttle accept. Auth and quota errors say
 * nothing about health (a bad key or an empty account), so the breaker ignores them. 429s feed
 * the breaker's throttled-ratio trigger. Unknown errors (often our own bugs) are not retried but
 * count as failures, as opossum and cockatiel count every error.
 */
const POLICIES: { readonly [K in ErrorClass]: Policy } = {
  success: policy('done', 'success', true),
  rate_limited: policy('retry', 'throttled', false),
  quota_exhausted: policy('fallback', 'ignored', false),
  overloaded: policy('retry', 'failure', false),
  server_error: policy('retry', 'failure', false),
  timeout: policy('retry', 'failure', false),
  connection: policy('retry', 'failure', false),
  stream_cut: policy('retry', 'failure', false),
  stream_stall: policy('retry', 'failure', false),
  context_length: policy('fallback', 'success', true),
  content_filter: policy('fail', 'success', true),
  auth: policy('fail', 'ignored', true),
  bad_request: policy('fail', 'success', true),
  not_found: policy('fail', 'success', true),
  conflict: policy('retry', 'success', true),
  cancelled: policy('fail', 'ignored', false, false),
  unknown: policy('fail', 'failure', false),
};

function make(
  cls: ErrorClass,
  action: ErrorAction,
  status: number | undefined,
  retryAfterMs: number | undefined,
  reason?: string,
): Classification {
  const p = POLICIES[cls];
  const c: Classification = {
    class: cls,
    action,
    breaker: p.breaker,
    accept: p.accept,
    counted: p.counted,
    retryAfterMs,
    status,
  };
  return reason === undefined ? c : { ...c, reason };
}

/** The shared, frozen classification of a class with its default action (no status, no retry-after). */
export function classOf(cls: ErrorClass): Classification {
  return BY_CLASS[cls];
}

const BY_CLASS = Object.fromEntries(
  ERROR_CLASSES.map((c) => [c, Object.freeze(make(c, POLICIES[c].action, undefined, undefined))]),
) as { readonly [K in ErrorClass]: Classification };

function statusClass(s: number): ErrorClass {
  if (s >= 200 && s < 300) return 'success';
  switch (s) {
    case 401:
    case 403:
      return 'auth';
    case 402:
      return 'quota_exhausted'; // Anthropic billing_error
    case 404:
    case 410:
      return 'not_found';
    case 408:
      return 'timeout';
    case 409:
      return 'conflict';
    case 429:
      return 'rate_limited';
    case 529:
      return 'overloaded';
  }
  if (s >= 400 && s < 500) return 'bad_request';
  if (s >= 500 && s < 600) return 'server_error';
  return 'unknown';
}

/** 501 Not Implemented and 505 HTTP Version Not Supported answer the same way every time. */
function defaultAction(cls: ErrorClass, status: number | undefined): ErrorAction {
  return cls === 'server_error' && (status === 501 || status === 505) ? 'fail' : POLICIES[cls].action;
}

const BY_STATUS: Classification[] = [];

/** Status only, for the simulator: shared frozen objects (built once per status), no allocation. */
export function classifyStatus(status: number): Classification {
  const cached = BY_STATUS[status];
  if (cached !== undefined) return cached;
  const cls = statusClass(status);
  const c = Object.freeze(make(cls, defaultAction(cls, status), status, undefined));
  if (Number.isInteger(status) && status >= 0 && status < 1000) BY_STATUS[status] = c;
  return c;
}

/**
 * Classifies one attempt from whatever it produced: a thrown error (its `cause` chain, SDK
 * error objects), a status, a body (OpenAI or Anthropic error shapes, object or JSON string),
 * headers (`x-should-retry`, `retry-after-ms`, `retry-after`). Never throws.
 *
 * `nowEpochMs` resolves an HTTP-date `retry-after`; without it only the `-ms` and seconds
 * forms give `retryAfterMs` (a date against an unknown now would be a guess).
 */
export function classify(result: AttemptResult, nowEpochMs?: number): Classification {
  if (result.cancelled === true) return BY_CLASS.cancelled;
  const err = result.error != null && typeof result.error === 'object' ? (result.error as ErrorLike) : undefined;
  const api = err !== undefined && typeof (err.status ?? err.statusCode) === 'number' ? err : undefined;
  const status = result.status ?? (api ? ((api.status ?? api.statusCode) as number) : undefined);
  const headers =
    result.headers ?? (api && typeof api.headers === 'object' ? (api.headers as HeaderSource) : undefined);
  const body = result.body ?? api?.error ?? api?.body;
  let cls = err !== undefined ? thrownClass(err, result.cancelled) : undefined;
  if (cls === undefined) {
    cls = status === undefined && body === undefined ? 'unknown' : httpClass(status, body);
    // Something was thrown after a 2xx (the body broke mid-read): not a success.
    if (cls === 'success' && result.error != null) cls = 'unknown';
  }
  if (cls === 'cancelled') return BY_CLASS.cancelled;
  // A 2xx (or a bare answer body) that is the model refusing: not the answer the caller asked for.
  if (err === undefined && body !== undefined && (status === undefined || (status >= 200 && status < 300))) {
    const refused = refusalOf(body);
    if (refused !== undefined) return finish('content_filter', status, headers, nowEpochMs, refused);
  }
  const reason = cls === 'content_filter' || cls === 'context_length' ? reasonOf(body, err) : undefined;
  return finish(cls, status, headers, nowEpochMs, reason);
}

/** The provider's message for a refusal: the error body's, else the thrown error's. */
function reasonOf(body: unknown, err: ErrorLike | undefined): string | undefined {
  const m = readError(body, true)?.message;
  if (m) return m;
  return typeof err?.message === 'string' && err.message !== '' ? err.message : undefined;
}

function finish(
  cls: ErrorClass,
  status: number | undefined,
  headers: HeaderSource,
  nowEpochMs: number | undefined,
  reason?: string,
): Classification {
  let action = defaultAction(cls, status);
  let retryAfterMs: number | undefined;
  if (cls !== 'success' && headers != null) {
    action = shouldRetryOverride(action, header(headers, 'x-should-retry'));
    retryAfterMs = parseRetryAfter(headers, nowEpochMs ?? NaN);
  }
  const base = status === undefined ? BY_CLASS[cls] : classifyStatus(status);
  if (base.class === cls && base.action === action && retryAfterMs === undefined && reason === undefined) return base;
  return make(cls, action, status, retryAfterMs, reason);
}

/**
 * `x-should-retry` (OpenAI): the server knows better than a status table. `true` → retry;
 * `false` → a planned retry becomes fail. A fallback stays a fallback: the header speaks for
 * this target only, and switching targets is not a retry here.
 */
function shouldRetryOverride(action: ErrorAction, value: string | undefined): ErrorAction {
  if (value === undefined) return action;
  const v = value.trim().toLowerCase();
  if (v === 'true') return 'retry';
  if (v === 'false' && action === 'retry') return 'fail';
  return action;
}

// ---- thrown errors -------------------------------------------------------------------------

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  status?: unknown;
  statusCode?: unknown;
  headers?: unknown;
  error?: unknown;
  body?: unknown;
}

const CODE_CLASS = new Map<string, ErrorClass>([
  ...[
    'ECONNRESET',
    'ECONNREFUSED',
    'ECONNABORTED',
    'EPIPE',
    'ENOTFOUND',
    'EAI_AGAIN',
    'EHOSTUNREACH',
    'ENETUNREACH',
    'UND_ERR_SOCKET',
    'UND_ERR_CLOSED',
  ].map((c) => [c, 'connection'] as const),
  ...['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'].map(
    (c) => [c, 'timeout'] as const,
  ),
  ['ERR_STORMLAB_STREAM_CUT', 'stream_cut'],
  ['ERR_STORMLAB_STREAM_STALL', 'stream_stall'],
]);

const NAME_CLASS = new Map<string, ErrorClass>([
  ['TimeoutError', 'timeout'], // AbortSignal.timeout()
  ['APIConnectionTimeoutError', 'timeout'], // OpenAI / Anthropic SDKs
  ['APIConnectionError', 'connection'],
]);

/**
 * Walks the `cause` chain (fetch wraps everything in `TypeError('fetch failed')`, the SDKs in
 * APIConnectionError). The first timeout or cancellation wins; a generic connection match
 * keeps looking, because its cause may be the more specific ETIMEDOUT.
 */
function thrownClass(error: ErrorLike, callerAborted: boolean | undefined): ErrorClass | undefined {
  let found: ErrorClass | undefined;
  let e: unknown = error;
  for (let depth = 0; depth < 8 && e != null && typeof e === 'object'; depth++) {
    const c = oneThrownClass(e as ErrorLike, callerAborted);
    // A stream fault is the engine's own verdict on the attempt: it wins over what caused it.
    if (c === 'timeout' || c === 'cancelled' || c === 'stream_cut' || c === 'stream_stall') return c;
    found ??= c;
    e = (e as ErrorLike).cause;
  }
  return found;
}

function oneThrownClass(e: ErrorLike, callerAborted: boolean | undefined): ErrorClass | undefined {
  const name = typeof e.name === 'string' ? e.name : '';
  if (name === 'AbortError' || name === 'APIUserAbortError') return callerAborted === false ? 'timeout' : 'cancelled';
  const byName = NAME_CLASS.get(name);
  if (byName !== undefined) return byName;
  const byCode = typeof e.code === 'string' ? CODE_CLASS.get(e.code) : undefined;
  if (byCode !== undefined) return byCode;
  return name === 'TypeError' && e.message === 'fetch failed' ? 'connection' : undefined;
}

// ---- error bodies --------------------------------------------------------------------------

const BODY_CLASS = new Map<string, ErrorClass>([
  ['insufficient_quota', 'quota_exhausted'],
  ['billing_error', 'quota_exhausted'],
  ['rate_limit_exceeded', 'rate_limited'],
  ['rate_limit_error', 'rate_limited'],
  ['context_length_exceeded', 'context_length'],
  ['content_filter', 'content_filter'],
  ['content_policy_violation', 'content_filter'],
  ['responsibleaipolicyviolation', 'content_filter'], // Azure OpenAI
  ['overloaded_error', 'overloaded'],
  ['authentication_error', 'auth'],
  ['permission_error', 'auth'],
  ['invalid_api_key', 'auth'],
  ['not_found_error', 'not_found'],
  ['model_not_found', 'not_found'],
  ['api_error', 'server_error'],
  ['server_error', 'server_error'],
  ['timeout_error', 'timeout'],
  ['invalid_request_error', 'bad_request'],
  ['request_too_large', 'bad_request'],
]);

interface ErrorFields {
  code: string | undefined;
  type: string | undefined;
  message: string;
}

/**
 * Body + status → class. The body's `code` (more specific) then `type` win over the status,
 * except a generic invalid_request_error, which defers to the status (OpenAI sends it with 404
 * too). Message hints (context length, quota) only apply to 4xx answers or status-less bodies.
 */
function httpClass(status: number | undefined, body: unknown): ErrorClass {
  const fromStatus = status === undefined ? undefined : statusClass(status);
  const fields = readError(body, fromStatus !== 'success');
  if (fields === undefined) return fromStatus ?? 'unknown';
  const named = bodyName(fields.code) ?? bodyName(fields.type);
  if ((named === undefined || named === 'bad_request') && (status === undefined || (status >= 400 && status < 500))) {
    const hinted = messageClass(fields.message);
    if (hinted !== undefined) return hinted;
  }
  if (named !== undefined && named !== 'bad_request') return named;
  if (fromStatus === undefined || fromStatus === 'success') return named ?? 'unknown';
  return fromStatus;
}

function bodyName(value: string | undefined): ErrorClass | undefined {
  return value === undefined ? undefined : BODY_CLASS.get(value.toLowerCase());
}

function messageClass(message: string): ErrorClass | undefined {
  if (message === '') return undefined;
  const m = message.toLowerCase();
  if (
    m.includes('prompt is too long') ||
    m.includes('maximum context length') ||
    m.includes('exceed context limit') ||
    m.includes('context window') ||
    (m.includes('context') && m.includes('token'))
  )
    return 'context_length';
  if (m.includes('exceeded your current quota') || m.includes('credit balance is too low')) return 'quota_exhausted';
  // Azure OpenAI's prompt filter, OpenAI's safety system, and gateways that rename the code.
  if (
    m.includes('content management policy') ||
    m.includes('content policy') ||
    m.includes('contentpolicyviolation') ||
    m.includes('safety system')
  )
    return 'content_filter';
  return undefined;
}

/**
 * Finds the error object in a body: `{ error: {...} }` (OpenAI, Anthropic), `{ error: 'text' }`,
 * or, when `bare` (not a 2xx, whose payload may legitimately hold a `message`), the inner
 * object itself (the OpenAI SDK's `APIError.error`) or plain text.
 */
function readError(body: unknown, bare: boolean): ErrorFields | undefined {
  if (typeof body === 'string') {
    const parsed = parseJson(body);
    if (parsed === undefined)
      return bare && body.trim() !== '' ? { code: undefined, type: undefined, message: body } : undefined;
    body = parsed;
  }
  if (body === null || typeof body !== 'object') return undefined;
  const outer = body as Record<string, unknown>;
  const inner = outer.error;
  if (typeof inner === 'string') return { code: undefined, type: undefined, message: inner };
  if (inner !== null && typeof inner === 'object') return fieldsOf(inner as Record<string, unknown>);
  if (bare && (typeof outer.type === 'string' || typeof outer.code === 'string' || typeof outer.message === 'string')) {
    return fieldsOf(outer);
  }
  return undefined;
}

function fieldsOf(o: Record<string, unknown>): ErrorFields {
  return {
    code: typeof o.code === 'string' ? o.code : undefined,
    type: typeof o.type === 'string' ? o.type : undefined,
    message: typeof o.message === 'string' ? o.message : '',
  };
}

function parseJson(text: string): unknown {
  const t = text.trimStart();
  if (t[0] !== '{' && t[0] !== '[') return undefined;
  try {
    return JSON.parse(t) as unknown;
  } catch {
    return undefined;
  }
}
