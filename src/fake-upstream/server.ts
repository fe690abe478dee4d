import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Clock } from '../engine/clock.js';
import { OptionError } from '../engine/errors.js';
import type { Random } from '../engine/random.js';
import { preciseClock } from '../platform/system-clock.js';
import { systemRandom } from '../platform/system-random.js';
import type { ModelConfig, UpstreamConfig } from '../upstream/config.js';
import { RequestFlag } from '../upstream/response.js';
import { MODEL_DEFAULTS } from '../upstream/upstream-model.js';
import { anthropicDialect } from './anthropic-dialect.js';
import type { Dialect, Invalid } from './dialect.js';
import { Exchange, type ExchangeContext } from './exchange.js';
import type { FakeUpstreamStats, HttpCounters } from './fake-upstream-stats.js';
import {
  absolutePhases,
  faultsJson,
  parseFaultBody,
  type FaultPhaseInput,
  type RelativeTo,
  type ServedFault,
} from './fault-phases.js';
import { openaiDialect } from './openai-dialect.js';
import { endsWithPrefill } from './prefill.js';
import { prometheusText } from './prometheus-text.js';
import { readBody } from './read-body.js';
import { RealTimeScheduler } from './real-time-scheduler.js';
import { sendJson } from './send-json.js';
import { UpstreamHost } from './upstream-host.js';

export const FAKE_UPSTREAM_DEFAULTS = {
  /** @default '127.0.0.1' */
  host: '127.0.0.1',
  /** 0 picks a free port. @default 0 */
  port: 0,
  /** Request bodies past this get 413 and the connection is closed. @default 1 MiB */
  maxBodyBytes: 1 << 20,
  /** Completion length when a request gives no `max_tokens` (OpenAI makes it optional). @default 256 */
  defaultMaxTokens: 256,
};

/** Hooks for tests and logs; each is called after the fact and must not throw. */
export interface FakeUpstreamObserver {
  /** A chat request reached the model. */
  submitted?(model: string): void;
  /** The model answered a chat request (status 0 = reset). */
  answered?(model: string, status: number): void;
  /** A chat request's client went away before its answer; the model was told. */
  cancelled?(model: string): void;
  /** Something inside the server failed (a bug); it answered 500 or closed that connection. */
  error?(err: unknown): void;
}

/** A scenario's resolved `upstream` fits; model fields with defaults and `faults` may be left out. */
export interface FakeUpstreamConfig {
  models: Array<Omit<ModelConfig, ModelDefaulted> & Partial<Pick<ModelConfig, ModelDefaulted>>>;
  /** Fault phases, times in ms since the server starts (`toMs` absent, null or Infinity: forever). */
  faults?: readonly FaultPhaseInput[];
  /** @default false */
  cancelOnDisconnect?: boolean;
}

type ModelDefaulted = keyof typeof MODEL_DEFAULTS;

export interface FakeUpstreamOptions {
  upstream: FakeUpstreamConfig;
  port?: number;
  host?: string;
  maxBodyBytes?: number;
  defaultMaxTokens?: number;
  /** Draws for faults and service times. @default systemRandom() */
  random?: Random;
  /** @default preciseClock */
  clock?: Clock;
  observer?: FakeUpstreamObserver;
}

export interface FakeUpstream {
  /** `http://host:port`, no trailing slash: OpenAI SDKs take `${url}/v1`, Anthropic's `url`. */
  url: string;
  port: number;
  host: string;
  stats(): FakeUpstreamStats;
  /** The fault phases in force, on the server's timeline (ms since start; `toMs` Infinity = forever). */
  faults(): readonly ServedFault[];
  /** Replaces the fault phases; times relative to now (default) or to the start. Throws an `OptionError` on bad input. */
  setFaults(phases: readonly FaultPhaseInput[], relativeTo?: RelativeTo): readonly ServedFault[];
  /** Counters and quotas back to zero; faults stay. */
  reset(): void;
  /** Stops listening, drops every connection (hanging ones too) and every timer. */
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

const MALFORMED =
  'We could not parse the JSON body of your request. The API expects a JSON payload, but what was sent was not valid JSON.';

/**
 * The fake LLM upstream over HTTP: the simulator's `UpstreamModel` on the real clock behind an
 * OpenAI- and Anthropic-compatible API, with a control API for faults and counters.
 *
 *   POST /v1/chat/completions   OpenAI chat completions, JSON or SSE (`stream: true`)
 *   POST /v1/messages           Anthropic messages, JSON or SSE
 *   GET  /v1/models             the models (Anthropic's shape when `anthropic-version` is sent)
 *   GET  /_stormlab/stats       counters per model and of the server
 *   GET  /_stormlab/faults      the fault phases in force (times since start)
 *   PUT  /_stormlab/faults      replace them: [phases] or {faults, relativeTo: now|start}
 *   POST /_stormlab/reset       counters and quotas back to zero
 *   GET  /metrics               Prometheus text
 *
 * Each chat request becomes `model.submit(...)`; the answer is written when the model answers;
 * a client that leaves first becomes `model.cancel(...)`. No input takes the server down: bad
 * bodies get provider-shaped 4xx, and a failure inside one exchange ends only that exchange.
 */
export async function createFakeUpstream(options: FakeUpstreamOptions): Promise<FakeUpstream> {
  const o = { ...FAKE_UPSTREAM_DEFAULTS, ...definedOnly(options) };
  const observer = options.observer ?? {};
  const counters: HttpCounters = { received: 0, invalid: 0, clientClosed: 0, internalErrors: 0 };
  const internalError = (err: unknown): void => {
    counters.internalErrors++;
    observer.error?.(err);
  };
  const clock = options.clock ?? preciseClock;
  const scheduler = new RealTimeScheduler(clock, internalError);
  const exchanges: Array<Exchange | undefined> = [];
  const freeSlots: number[] = [];
  let serial = 0;

  const config: UpstreamConfig = {
    models: options.upstream.models.map((m) => ({ ...MODEL_DEFAULTS, ...m })),
    faults: absolutePhases(options.upstream.faults ?? [], 'start', 0),
    cancelOnDisconnect: options.upstream.cancelOnDisconnect ?? false,
  };
  const host = new UpstreamHost(config, scheduler, options.random ?? systemRandom(), {
    onResponse(id, status, detail, tokens, retryAfterMs) {
      const ex = exchanges[id];
      if (ex === undefined || ex.answered) return;
      try {
        ex.answer(status, detail, tokens, retryAfterMs);
      } catch (err) {
        internalError(err);
        ex.res.destroy();
      }
      observer.answered?.(host.names[ex.modelIndex], status);
    },
    onStream(id, event, ms, tokens) {
      const ex = exchanges[id];
      if (ex === undefined || ex.answered) return;
      try {
        ex.streamEvent(event, ms, tokens);
      } catch (err) {
        internalError(err);
        ex.res.destroy();
      }
    },
  });
  const ctx: ExchangeContext = {
    host,
    now: () => scheduler.now(),
    setTimer: (ms, fn) => clock.setTimer(ms, fn),
    epochMs: Date.now() - scheduler.now(),
  };

  /**
   * The end of a chat exchange. Ended before the model answered, it is cancelled at the model:
   * the client left, or (response already ended) the server answered 500 after an internal error.
   */
  const finish = (ex: Exchange): void => {
    ex.stop();
    if (!ex.answered) {
      ex.answered = true;
      ex.model?.cancel(ex.slot, scheduler.now());
      if (!ex.res.writableEnded) {
        counters.clientClosed++;
        observer.cancelled?.(host.names[ex.modelIndex]);
      }
    }
    exchanges[ex.slot] = undefined;
    freeSlots.push(ex.slot);
  };

  const refuse = (res: ServerResponse, dialect: Dialect, e: Invalid, headers: Record<string, string> = {}): void => {
    counters.invalid++;
    sendJson(res, e.status, dialect.invalid(e), headers);
  };

  /** The request's JSON body, or undefined once it has been answered (too large, malformed) or the client left. */
  const readJson = async (
    req: IncomingMessage,
    res: ServerResponse,
    dialect: Dialect,
  ): Promise<{ value: unknown } | undefined> => {
    const r = await readBody(req, o.maxBodyBytes);
    if (r.kind === 'aborted') return undefined;
    if (r.kind === 'too-large') {
      refuse(
        res,
        dialect,
        {
          status: 413,
          message: `Request body too large: the limit is ${o.maxBodyBytes} bytes.`,
          param: null,
          code: 'request_too_large',
        },
        { connection: 'close' },
      );
      return undefined;
    }
    try {
      return { value: JSON.parse(r.body.toString('utf8')) };
    } catch {
      refuse(res, dialect, { status: 400, message: MALFORMED, param: null, code: null });
      return undefined;
    }
  };

  const chat =
    (dialect: Dialect): Handler =>
    async (req, res) => {
      const body = await readJson(req, res, dialect);
      if (body === undefined) return;
      const parsed = dialect.parse(body.value, o.defaultMaxTokens);
      if (!parsed.ok) return refuse(res, dialect, parsed);
      const { chat: request } = parsed;
      const model = host.modelIndex(request.model);
      if (model < 0) return refuse(res, dialect, dialect.unknownModel(request.model));
      if (res.destroyed) return;
      const slot = freeSlots.length > 0 ? freeSlots.pop()! : exchanges.length;
      const created = Math.floor((ctx.epochMs + scheduler.now()) / 1000);
      const info = {
        id: `${dialect.idPrefix}${(++serial).toString(36)}`,
        model: request.model,
        created,
        promptTokens: request.promptTokens,
        includeUsage: request.includeUsage,
      };
      const ex = new Exchange(slot, res, dialect, request, model, info, ctx);
      exchanges[slot] = ex;
      res.on('close', () => finish(ex));
      ex.model = host.current;
      const flags = (request.stream ? RequestFlag.Stream : 0) | (endsWithPrefill(body.value) ? RequestFlag.Prefill : 0);
      host.submit(slot, model, request.promptTokens, request.maxTokens, flags);
      observer.submitted?.(request.model);
    };

  const stats = (): FakeUpstreamStats => ({
    nowMs: scheduler.now(),
    inFlight: exchanges.length - freeSlots.length,
    http: { ...counters },
    models: host.stats(),
  });
  const faultView = () => ({ nowMs: scheduler.now(), relativeTo: 'start', faults: faultsJson(host.faults()) });
  const reset = (): void => {
    host.reset();
    Object.assign(counters, { received: 0, invalid: 0, clientClosed: 0, internalErrors: 0 });
  };

  const routes: Record<string, Record<string, Handler>> = {
    '/v1/chat/completions': { POST: chat(openaiDialect) },
    '/v1/messages': { POST: chat(anthropicDialect) },
    '/v1/models': {
      GET: (req, res) => sendJson(res, 200, dialectOf(req).modelList(host.names, Math.floor(ctx.epochMs / 1000))),
    },
    '/_stormlab/stats': { GET: (_req, res) => sendJson(res, 200, stats()) },
    '/_stormlab/faults': {
      GET: (_req, res) => sendJson(res, 200, faultView()),
      PUT: async (req, res) => {
        const body = await readJson(req, res, openaiDialect);
        if (body === undefined) return;
        try {
          host.setFaults(parseFaultBody(body.value, scheduler.now()));
        } catch (e) {
          if (!(e instanceof OptionError)) throw e;
          return refuse(res, openaiDialect, { status: 400, message: e.message, param: 'faults', code: null });
        }
        sendJson(res, 200, faultView());
      },
    },
    '/_stormlab/reset': {
      POST: (_req, res) => {
        reset();
        sendJson(res, 200, { reset: true, nowMs: scheduler.now() });
      },
    },
    '/metrics': {
      GET: (_req, res) => {
        const text = prometheusText(stats());
        res.writeHead(200, {
          'content-type': 'text/plain; version=0.0.4; charset=utf-8',
          'content-length': Buffer.byteLength(text),
        });
        res.end(text);
      },
    },
  };

  const server: Server = createServer((req, res) => {
    counters.received++;
    req.on('error', () => {});
    res.on('error', () => {});
    const path = (req.url ?? '/').split('?')[0];
    const route = routes[path];
    const dialect = path.startsWith('/v1/messages') ? anthropicDialect : dialectOf(req);
    if (route === undefined) {
      return refuse(res, dialect, {
        status: 404,
        message: `Unknown request URL: ${req.method} ${path}.`,
        param: null,
        code: 'unknown_url',
      });
    }
    const handler = route[req.method ?? ''];
    if (handler === undefined) {
      const allow = Object.keys(route).join(', ');
      return refuse(
        res,
        dialect,
        {
          status: 405,
          message: `Method ${req.method} not allowed on ${path} (allowed: ${allow}).`,
          param: null,
          code: 'method_not_allowed',
        },
        { allow },
      );
    }
    Promise.resolve()
      .then(() => handler(req, res))
      .catch((err: unknown) => {
        internalError(err);
        if (res.headersSent) res.destroy();
        else
          sendJson(res, 500, {
            error: {
              message: `internal error in the fake upstream: ${err instanceof Error ? err.message : String(err)}`,
              type: 'server_error',
              param: null,
              code: null,
            },
          });
      });
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable || err.code === 'ECONNRESET') return void socket.destroy();
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request';
    socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
  });

  await listen(server, o.port, o.host);
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : o.port;
  const url = `http://${o.host.includes(':') ? `[${o.host}]` : o.host}:${port}`;
  let closing: Promise<void> | undefined;

  return {
    url,
    port,
    host: o.host,
    stats,
    faults: () => host.faults(),
    setFaults(phases, relativeTo = 'now') {
      host.setFaults(absolutePhases(phases, relativeTo, scheduler.now()));
      return host.faults();
    },
    reset,
    close() {
      closing ??= new Promise<void>((resolve) => {
        scheduler.stop();
        for (const ex of exchanges) ex?.stop();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** Anthropic's SDK sends `anthropic-version`; anything else is answered the OpenAI way. */
function dialectOf(req: IncomingMessage): Dialect {
  return req.headers['anthropic-version'] !== undefined ? anthropicDialect : openaiDialect;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
