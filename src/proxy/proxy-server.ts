import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { Pool } from 'undici';
import type { Clock } from '../engine/clock.js';
import { OptionError } from '../engine/errors.js';
import type { Random } from '../engine/random.js';
import { anthropicDialect } from '../fake-upstream/anthropic-dialect.js';
import { controlRoutes } from '../fake-upstream/control-routes.js';
import type { Dialect } from '../fake-upstream/dialect.js';
import { resetSocket } from '../fake-upstream/exchange.js';
import type { FakeUpstreamStats, HttpCounters } from '../fake-upstream/fake-upstream-stats.js';
import {
  absolutePhases,
  type FaultPhaseInput,
  type RelativeTo,
  type ServedFault,
} from '../fake-upstream/fault-phases.js';
import { jsonReader, refuser } from '../fake-upstream/json-request.js';
import type { Routes } from '../fake-upstream/model-routes.js';
import { openaiDialect } from '../fake-upstream/openai-dialect.js';
import { readBody } from '../fake-upstream/read-body.js';
import { RequestLog, type RequestLogEntry } from '../fake-upstream/request-log.js';
import type { MetricFamily } from '../fake-upstream/prometheus-text.js';
import { responsesDialect } from '../fake-upstream/responses-dialect.js';
import { routeKey } from '../fake-upstream/route-key.js';
import { sendJson } from '../fake-upstream/send-json.js';
import { faultHint } from '../fake-upstream/upstream-host.js';
import { estimateRequestTokens, readJsonBody } from '../integrations/request-estimate.js';
import { preciseClock } from '../platform/system-clock.js';
import { systemRandom } from '../platform/system-random.js';
import { FaultCode } from '../upstream/fault-timeline.js';
import { rateLimitHeaders } from '../upstream/provider-shapes.js';
import { Detail } from '../upstream/response.js';
import { type AnswerPlan, type ExchangeContext, ProxyExchange } from './proxy-exchange.js';
import { ProxyFaults } from './proxy-faults.js';
import { ProxyModel, ProxyModels, type ProxyQuotas } from './proxy-models.js';

export const PROXY_DEFAULTS = {
  /** @default '127.0.0.1' */
  host: '127.0.0.1',
  /** 0 picks a free port. @default 0 */
  port: 0,
  /** Request bodies past this get 413 and the connection is closed (bodies are read whole before they are sent on). @default 32 MiB */
  maxBodyBytes: 32 << 20,
};

/** The model routes the proxy reads (a POST's JSON body names the model); anything else goes through untouched. */
const MODEL_ROUTES: Readonly<Record<string, Dialect>> = {
  '/v1/chat/completions': openaiDialect,
  '/v1/messages': anthropicDialect,
  '/v1/responses': responsesDialect,
  '/v1/embeddings': openaiDialect,
};

/** Routes whose path carries an id, named by their pattern in the request log and route counters (not one name per id). */
const ID_ROUTES: Readonly<Record<string, true>> = {
  '/v1/responses/{id}': true,
  '/v1/responses/{id}/input_items': true,
};

export interface ProxyOptions {
  /** The server requests go on to: `http://host:port`, optionally with a base path that goes in front of every request's. */
  upstream: string;
  port?: number;
  host?: string;
  maxBodyBytes?: number;
  /** Fault phases, times in ms since the proxy starts (as `stormlab serve` takes them). */
  faults?: readonly FaultPhaseInput[];
  /** Requests and tokens per minute per model (429s in the provider's shape when spent). */
  quotas?: ProxyQuotas;
  /** Draws for fault rates, statuses and added latencies. @default systemRandom() */
  random?: Random;
  /** @default preciseClock */
  clock?: Clock;
  /** Hears each finished model request (`stormlab proxy --log FILE`). */
  requestLog?: (entry: RequestLogEntry) => void;
  /** Hears what went wrong: the upstream (unreachable, a body that broke) or the proxy itself (a bug). */
  observer?: { upstreamError?(err: unknown): void; error?(err: unknown): void };
}

/** What the proxy counts beside serve's counters: what it forwarded and what it did not understand. */
export interface ProxyCounters {
  /** The upstream, as given. */
  upstream: string;
  /** Requests sent on to the upstream (every route). */
  forwarded: number;
  /** Requests it does not read (not a POST to a model route with a JSON body): forwarded untouched, never faulted. */
  unknown: number;
  /** Requests the upstream gave no answer to (answered 502), or whose answer broke off. */
  upstreamErrors: number;
  /**
   * Answers a fault or a TPM limit had to read that came compressed (though `identity` was asked
   * for) in an encoding the proxy cannot decode (not gzip, deflate or br): relayed as they came,
   * the fault not applied, their tokens not counted.
   */
  unshaped: number;
}

/** `GET /_stormlab/stats` of a proxy: serve's, plus `proxy`. */
export type ProxyStats = FakeUpstreamStats & { proxy: ProxyCounters };

export interface StormlabProxy {
  /** `http://host:port`: clients use it where they used the upstream's address. */
  url: string;
  port: number;
  stats(): ProxyStats;
  faults(): readonly ServedFault[];
  setFaults(phases: readonly FaultPhaseInput[], relativeTo?: RelativeTo): readonly ServedFault[];
  requests(limit?: number): RequestLogEntry[];
  reset(): void;
  close(): Promise<void>;
}

/** The plan of a request nothing shapes. */
const PLAIN: Readonly<AnswerPlan> = { fault: 0, afterTokens: 0, ms: 0, addMs: 0, factor: 1, latencyAddMs: 0 };

/**
 * `stormlab proxy`: a reverse proxy in front of any OpenAI- or Anthropic-compatible server that
 * injects the fake upstream's fault phases into real answers, with serve's control API
 * (`/_stormlab/faults`, `/stats`, `/requests`, `/reset`), request log, route counters and
 * Prometheus text (`/metrics`). Each model request is decided at arrival as serve's model
 * decides it — the same `FaultTimeline` — then answered by the proxy itself (an error in the
 * provider's shape, a reset, a hang, a 429 of its own RPM/TPM limits) or sent on and relayed,
 * shaped by the fault (see `ProxyExchange`). A request it does not read goes on untouched and
 * is counted (`proxy.unknown`).
 */
export async function createProxy(options: ProxyOptions): Promise<StormlabProxy> {
  const o = { ...PROXY_DEFAULTS, ...definedOnly(options) };
  const target = upstreamTarget(options.upstream);
  const base = options.clock ?? preciseClock;
  const t0 = base.now();
  const clock: Clock = { now: () => base.now() - t0, setTimer: (ms, fn) => base.setTimer(ms, fn) };
  const now = clock.now;
  const random = options.random ?? systemRandom();
  const faults = new ProxyFaults(random, absolutePhases(options.faults ?? [], 'start', 0));
  const models = new ProxyModels(options.quotas ?? {});
  const counters: HttpCounters = { received: 0, invalid: 0, clientClosed: 0, internalErrors: 0 };
  const proxy: ProxyCounters = { upstream: options.upstream, forwarded: 0, unknown: 0, upstreamErrors: 0, unshaped: 0 };
  const log = new RequestLog(now, Date.now() - now(), options.requestLog);
  const refuse = refuser(counters);
  const readJson = jsonReader(1 << 20, refuse);
  const pool = new Pool(target.origin, { keepAliveTimeout: 30_000 });
  const stats = (): ProxyStats => ({
    nowMs: now(),
    inFlight: log.routes.inFlight,
    lastActivityMs: log.routes.lastActivityMs,
    http: { ...counters },
    routes: log.routes.routes(),
    models: models.stats(now()),
    proxy: { ...proxy },
  });
  const reset = (): void => {
    log.clear();
    models.reset();
    Object.assign(counters, { received: 0, invalid: 0, clientClosed: 0, internalErrors: 0 });
    Object.assign(proxy, { forwarded: 0, unknown: 0, upstreamErrors: 0, unshaped: 0 });
  };
  const ctx: ExchangeContext = {
    clock,
    log,
    upstreamError(err) {
      proxy.upstreamErrors++;
      options.observer?.upstreamError?.(err);
    },
    unshaped() {
      proxy.unshaped++;
    },
  };
  const metrics = (): MetricFamily[] => [
    {
      name: 'stormlab_proxy_forwarded_total',
      type: 'counter',
      help: 'Requests sent on to the upstream, every route.',
      rows: [['', proxy.forwarded]],
    },
    {
      name: 'stormlab_proxy_unknown_total',
      type: 'counter',
      help: 'Requests the proxy does not read (not a POST to a model route with a JSON body): forwarded untouched.',
      rows: [['', proxy.unknown]],
    },
    {
      name: 'stormlab_proxy_upstream_errors_total',
      type: 'counter',
      help: 'Requests the upstream gave no answer to (answered 502), or whose answer broke off.',
      rows: [['', proxy.upstreamErrors]],
    },
    {
      name: 'stormlab_proxy_unshaped_total',
      type: 'counter',
      help: 'Answers a fault or a TPM limit had to read that came in an encoding the proxy cannot decode: relayed as they came.',
      rows: [['', proxy.unshaped]],
    },
  ];
  const control = controlRoutes({ host: faults, now, stats, reset, log, readJson, refuse, metrics });
  const unknownModel = new ProxyModel('(not a model request)', {});

  /** Sends a request on; `plan` shapes its answer. */
  const forward = (
    req: IncomingMessage,
    res: ServerResponse,
    body: Buffer,
    d: Dialect,
    m: ProxyModel,
    plan: AnswerPlan,
    arrived: number,
    reserved: number,
  ) => {
    proxy.forwarded++;
    new ProxyExchange(req, res, d, m, plan, ctx, arrived, reserved).send(
      pool,
      target.base + (req.url ?? '/'),
      body,
      target.host,
    );
  };

  /** A model request read: its fault and the model's quotas decide whether the proxy answers it itself. */
  const modelRequest = (
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    d: Dialect,
    body: Buffer,
    json: Record<string, unknown>,
  ) => {
    const at = now();
    const name = typeof json.model === 'string' ? json.model : null;
    if (name !== null) log.request(res, name, json.stream === true);
    const m = models.get(name ?? '(no model)');
    const index = faults.modelIndex(name);
    const t = faults.timeline;
    const phase = t.arrival(index, at, path);
    const kind = phase < 0 ? 0 : t.kind(phase);
    const refused = (status: number, detail: number, retryAfterMs = -1, extra: Record<string, string> = {}) => {
      log.outcome(res, detail);
      m.answered(status, detail);
      const wire = d.wireStatus?.(status) ?? status;
      const shape = d.error(wire, detail, retryAfterMs);
      sendJson(res, wire, shape.body, { [d.requestIdHeader]: requestId(), ...shape.headers, ...extra });
    };
    switch (kind) {
      case FaultCode.Errors:
      case FaultCode.Outage: {
        const status = t.status(phase);
        const retry = faultHint(faults.faults(), name ?? '', status, at, 'retryAfterMs') ?? -1;
        const should = faultHint(faults.faults(), name ?? '', status, at, 'shouldRetry');
        return refused(status, Detail.Fault, retry, should === undefined ? {} : { 'x-should-retry': String(should) });
      }
      case FaultCode.Quota:
        return refused(429, Detail.InsufficientQuota);
      case FaultCode.Reset:
        log.outcome(res, Detail.Reset);
        m.answered(0, Detail.Reset);
        return resetSocket(res);
      case FaultCode.Hang:
        m.attempts++;
        return; // never answered: the client's leaving ends it
      case FaultCode.ContentFilter:
        return refused(400, Detail.ContentFilter);
    }
    const estimate = m.tpm === null && kind !== FaultCode.ContextLength ? 0 : estimateRequestTokens(json, undefined);
    if (kind === FaultCode.ContextLength && estimate > t.contextTokens(phase))
      return refused(400, Detail.ContextLength);
    const limits = (): Record<string, string> => {
      const all = rateLimitHeaders({
        requests: m.rpm ?? undefined,
        tokens: m.tpm ?? undefined,
        now: at,
        epochMs: Date.now() - at,
      });
      const own: Record<string, string> = {};
      for (const k in all) if (k.startsWith(d.rateLimitPrefix)) own[k] = all[k];
      return own;
    };
    if (m.rpm !== null) {
      const wait = m.rpm.waitMs(1, at);
      if (wait !== 0) return refused(429, Detail.RateLimitRequests, wait === Infinity ? -1 : wait, limits());
    }
    if (m.tpm !== null) {
      const wait = m.tpm.waitMs(estimate, at);
      if (wait !== 0) return refused(429, Detail.RateLimitTokens, wait === Infinity ? -1 : wait, limits());
      m.tpm.take(estimate, at);
    }
    m.rpm?.take(1, at);
    const shaping = kind >= FaultCode.SlowFirstToken || kind === FaultCode.Midstream;
    const factor = t.latencyFactor(index, at, path);
    const add = t.latencyAddMs(index, at, path);
    const plan: AnswerPlan =
      !shaping && factor === 1 && add === 0
        ? { ...PLAIN }
        : {
            fault: shaping && kind !== FaultCode.ContextLength ? kind : 0,
            afterTokens: shaping ? t.afterTokens(phase) : 0,
            ms: shaping ? t.ms(phase) : 0,
            addMs: shaping ? t.addMs(phase) : 0,
            factor,
            latencyAddMs: add,
          };
    forward(req, res, body, d, m, plan, at, estimate);
  };

  const handle = (req: IncomingMessage, res: ServerResponse, path: string): void => {
    readBody(req, o.maxBodyBytes, (r) => {
      const d = MODEL_ROUTES[path];
      if (r.kind === 'aborted') return;
      if (r.kind === 'too-large')
        return refuse(
          res,
          d ?? openaiDialect,
          {
            status: 413,
            message: `Request body too large for the proxy: the limit is ${o.maxBodyBytes} bytes.`,
            param: null,
            code: 'request_too_large',
          },
          { connection: 'close' },
        );
      const json = d !== undefined && req.method === 'POST' ? readJsonBody(r.body) : undefined;
      if (d === undefined || json === null || typeof json !== 'object' || Array.isArray(json)) {
        proxy.unknown++;
        return forward(req, res, r.body, d ?? openaiDialect, unknownModel, { ...PLAIN }, now(), 0);
      }
      modelRequest(req, res, path, d, r.body, json as Record<string, unknown>);
    });
  };

  const server: Server = createServer({ highWaterMark: 1 << 18 }, (req, res) => {
    counters.received++;
    res.on('error', ignore);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    try {
      const route = control[path];
      if (route !== undefined) return controlRequest(route, req, res, refuse);
      if (path.startsWith('/v1/')) log.begin(req, res, routeKey(ID_ROUTES, path));
      handle(req, res, path);
    } catch (err) {
      counters.internalErrors++;
      options.observer?.error?.(err);
      if (!res.headersSent)
        sendJson(res, 500, {
          error: { message: 'internal error in the proxy', type: 'server_error', param: null, code: null },
        });
      else res.destroy();
    }
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable || err.code === 'ECONNRESET') return void socket.destroy();
    socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: o.port, host: o.host }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : o.port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${o.host.includes(':') ? `[${o.host}]` : o.host}:${port}`,
    port,
    stats,
    faults: () => faults.faults(),
    setFaults(phases, relativeTo = 'now') {
      faults.setFaults(absolutePhases(phases, relativeTo, now()));
      return faults.faults();
    },
    requests: (limit) => log.list(limit),
    reset,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }).then(() => pool.destroy());
      return closing;
    },
  };
}

/** A control route's handler, or 405 naming the methods it has. */
function controlRequest(
  route: Routes[string],
  req: IncomingMessage,
  res: ServerResponse,
  refuse: ReturnType<typeof refuser>,
): void {
  const handler = route[req.method ?? ''];
  if (handler === undefined) {
    const allow = Object.keys(route).join(', ');
    return refuse(
      res,
      openaiDialect,
      {
        status: 405,
        message: `Method ${req.method} not allowed (allowed: ${allow}).`,
        param: null,
        code: 'method_not_allowed',
      },
      { allow },
    );
  }
  const failed = (err: unknown): void => {
    if (res.headersSent) res.destroy();
    else
      sendJson(res, 500, {
        error: {
          message: `internal error in the proxy: ${err instanceof Error ? err.message : String(err)}`,
          type: 'server_error',
          param: null,
          code: null,
        },
      });
  };
  const done = handler(req, res, failed);
  if (done !== undefined) done.catch(failed);
}

/** Where requests go: the origin, the base path in front of theirs, the `host` header. */
function upstreamTarget(raw: string): { origin: string; base: string; host: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OptionError(`upstream must be a URL like http://127.0.0.1:11434, got ${JSON.stringify(raw)}`, 'upstream');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new OptionError(`upstream must be an http:// or https:// URL, got ${JSON.stringify(raw)}`, 'upstream');
  if (url.search !== '' || url.hash !== '')
    throw new OptionError(`upstream must not carry a query or a fragment, got ${JSON.stringify(raw)}`, 'upstream');
  return { origin: url.origin, base: url.pathname.replace(/\/+$/, ''), host: url.host };
}

/** A request id for the proxy's own answers (the upstream's answers keep theirs). */
function requestId(): string {
  return `req_${randomUUID().replace(/-/g, '')}`;
}

function ignore(): void {}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
