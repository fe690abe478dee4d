import { CalibrateError } from './calibrate-error.js';
import { Role, roleOf, type Span } from './span.js';

type Json = Record<string, unknown>;

/** An OTLP `AnyValue` as a string (`stringValue`, a number, the first of an array). */
function text(v: unknown): string {
  if (v === null || typeof v !== 'object') return '';
  const a = v as Json;
  if (typeof a.stringValue === 'string') return a.stringValue;
  if (a.intValue !== undefined) return String(a.intValue);
  if (a.doubleValue !== undefined) return String(a.doubleValue);
  const arr = (a.arrayValue as Json | undefined)?.values;
  return Array.isArray(arr) && arr.length > 0 ? text(arr[0]) : '';
}

/** An OTLP `AnyValue` as a number (ints come as strings in OTLP JSON); NaN when it is none. */
function number(v: unknown): number {
  const s = text(v);
  return s === '' ? Number.NaN : Number(s);
}

const KINDS: Record<string, number> = {
  SPAN_KIND_UNSPECIFIED: 0,
  SPAN_KIND_INTERNAL: 1,
  SPAN_KIND_SERVER: 2,
  SPAN_KIND_CLIENT: 3,
  SPAN_KIND_PRODUCER: 4,
  SPAN_KIND_CONSUMER: 5,
};

const FIRST_TOKEN_EVENT = /first[_. ]?(token|chunk)/i;

/**
 * Nanoseconds since the epoch (a string or a number in OTLP JSON) as ms, or NaN. A double
 * holds 1.7e18 ns to within 256 ns, far below what a span's timing means.
 */
function nanosToMs(v: unknown): number {
  if (typeof v === 'number') return v / 1e6;
  if (typeof v !== 'string' || v === '') return Number.NaN;
  const n = Number(v);
  return n >= 0 ? n / 1e6 : Number.NaN;
}

/**
 * One OTLP JSON span as a `Span`, reading only the attributes the fit needs (see `Span`). Throws
 * a `CalibrateError` naming `where` when it lacks what every span has (ids, times).
 */
export function spanOf(s: Json, scope: string, where: () => string): { traceId: string; span: Span } {
  const traceId = s.traceId;
  const id = s.spanId;
  if (typeof traceId !== 'string' || traceId === '') throw new CalibrateError(`${where()}: a span without a traceId`);
  if (typeof id !== 'string' || id === '') throw new CalibrateError(`${where()}: a span without a spanId`);
  const start = nanosToMs(s.startTimeUnixNano);
  const end = nanosToMs(s.endTimeUnixNano);
  if (!Number.isFinite(start) || !Number.isFinite(end))
    throw new CalibrateError(`${where()}: span ${id} has no startTimeUnixNano/endTimeUnixNano`);
  const parent = typeof s.parentSpanId === 'string' ? s.parentSpanId : '';
  const name = typeof s.name === 'string' ? s.name : '';
  const kind = typeof s.kind === 'number' ? s.kind : typeof s.kind === 'string' ? (KINDS[s.kind] ?? 0) : 0;
  let op = '';
  let aiOp = '';
  let system = false;
  let model = '';
  let responseModel = '';
  let tool = '';
  let agent = '';
  let inTok = -1;
  let outTok = -1;
  let status = 0;
  let errorType = '';
  let http = false;
  let retryCount = -1;
  let retryAfterMs = -1;
  let firstTokenMs = -1;
  const attrs = s.attributes;
  if (Array.isArray(attrs)) {
    for (const a of attrs as Json[]) {
      // The key decides; a value is looked at only for the keys below (never prompt or output text).
      switch (a.key) {
        case 'gen_ai.operation.name':
          op = text(a.value);
          break;
        case 'gen_ai.system':
        case 'gen_ai.provider.name':
          system = true;
          break;
        case 'gen_ai.request.model':
        case 'ai.model.id':
          if (model === '') model = text(a.value);
          break;
        case 'gen_ai.response.model':
          responseModel = text(a.value);
          break;
        case 'gen_ai.usage.input_tokens':
        case 'gen_ai.usage.prompt_tokens':
        case 'ai.usage.promptTokens':
        case 'ai.usage.inputTokens':
          inTok = number(a.value);
          break;
        case 'gen_ai.usage.output_tokens':
        case 'gen_ai.usage.completion_tokens':
        case 'ai.usage.completionTokens':
        case 'ai.usage.outputTokens':
          outTok = number(a.value);
          break;
        case 'gen_ai.tool.name':
        case 'ai.toolCall.name':
          tool = text(a.value);
          break;
        case 'gen_ai.agent.name':
        case 'ai.telemetry.functionId':
          agent = text(a.value);
          break;
        case 'error.type':
          errorType = text(a.value);
          break;
        case 'http.response.status_code':
        case 'http.status_code':
          status = number(a.value) || 0;
          http = true;
          break;
        case 'http.request.method':
        case 'http.method':
          http = true;
          break;
        case 'http.request.header.x-stainless-retry-count':
          retryCount = number(a.value);
          break;
        case 'http.response.header.retry-after-ms':
          retryAfterMs = number(a.value);
          break;
        case 'http.response.header.retry-after':
          if (retryAfterMs < 0) retryAfterMs = number(a.value) * 1000;
          break;
        case 'ai.operationId':
          aiOp = text(a.value);
          break;
        case 'ai.response.msToFirstChunk':
          firstTokenMs = number(a.value);
          break;
      }
    }
  }
  const events = s.events;
  if (firstTokenMs < 0 && Array.isArray(events)) {
    for (const e of events as Json[]) {
      if (typeof e.name === 'string' && FIRST_TOKEN_EVENT.test(e.name)) {
        const at = nanosToMs(e.timeUnixNano);
        if (Number.isFinite(at)) firstTokenMs = at - start;
        break;
      }
    }
  }
  const st = (s.status as Json | undefined)?.code;
  const errored = st === 2 || st === 'STATUS_CODE_ERROR';
  let role = roleOf(op, aiOp, name, kind, http);
  // Older instrumentations name the provider and the model without an operation: a model call.
  if (role === Role.other && system && model !== '' && !http) role = Role.model;
  return {
    traceId,
    span: {
      id,
      parent,
      kind,
      start,
      end: Math.max(end, start),
      role,
      name,
      model: model !== '' ? model : responseModel,
      tool,
      agent,
      inTok: Number.isFinite(inTok) ? inTok : -1,
      outTok: Number.isFinite(outTok) ? outTok : -1,
      status,
      failed: errored || errorType !== '' || status >= 400,
      errorType,
      retryCount: Number.isFinite(retryCount) ? retryCount : -1,
      retryAfterMs: Number.isFinite(retryAfterMs) ? retryAfterMs : -1,
      firstTokenMs: Number.isFinite(firstTokenMs) ? firstTokenMs : -1,
      scope,
    },
  };
}
