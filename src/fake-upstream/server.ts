import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Clock } from '../engine/clock.js';
import { checkPositive } from '../engine/options.js';
import { SeededRandom, type Random } from '../engine/random.js';
import { preciseClock } from '../platform/system-clock.js';
import { systemRandom } from '../platform/system-random.js';
import type { ModelConfig, UpstreamConfig } from '../upstream/config.js';
import { MODEL_DEFAULTS } from '../upstream/upstream-model.js';
import { anthropicDialect } from './anthropic-dialect.js';
import { AnswerLengths } from './answer-length.js';
import type { Dialect } from './dialect.js';
import type { Exchange, ExchangeContext } from './exchange.js';
import { ExchangeTable } from './exchange-table.js';
import type { FakeUpstreamStats, HttpCounters } from './fake-upstream-stats.js';
import { absolutePhases, type FaultPhaseInput, type RelativeTo, type ServedFault } from './fault-phases.js';
import { controlRoutes } from './control-routes.js';
import { jsonParser, jsonReader, type Refuse, refuser, textReader } from './json-request.js';
import { modelRoutes, type Routes } from './model-routes.js';
import { ModelNames, type UnknownModels } from './model-names.js';
import { CONNECTION_GATE_DEFAULTS, type ConnectionGate, gateConnections } from './connection-gate.js';
import {
  CONNECTION_TIMEOUT_DEFAULTS,
  closeIdleConnections,
  type ConnectionTimeouts,
  timeoutServerOptions,
} from './connection-timeouts.js';
import { openaiDialect } from './openai-dialect.js';
import { RealTimeScheduler } from '../run/real-time-scheduler.js';
import { routeKey } from './route-key.js';
import { RequestLog, type RequestLogEntry } from './request-log.js';
import { ResponseStore, STORED_RESPONSES } from './response-store.js';
import { sendJson } from './send-json.js';
import { parseToolPolicy, TOOL_POLICY_DEFAULTS, type ToolPolicy } from './tool-policy.js';
import { toolHost } from './tool-routes.js';
import { UpstreamHost } from './upstream-host.js';
import type { ToolConfig } from '../upstream/tool-config.js';
import type { ToolServiceStats } from '../upstream/tool-service.js';

export const FAKE_UPSTREAM_DEFAULTS = {
  /** @default '127.0.0.1' */
  host: '127.0.0.1',
  /** 0 picks a free port. @default 0 */
  port: 0,
  /** Request bodies past this get 413 and the connection is closed. @default 1 MiB */
  maxBodyBytes: 1 << 20,
  /**
   * Token limit of a request that gives no `max_tokens` (OpenAI makes it optional): high enough
   * that an answer ends by itself, as it does at a provider. @default 4096
   */
  defaultMaxTokens: 4096,
  /**
   * Responses API answers kept for `previous_response_id` and `GET /v1/responses/{id}`, least
   * recently used out first. @default 1000
   */
  storedResponses: STORED_RESPONSES.default as number,
  ...CONNECTION_TIMEOUT_DEFAULTS,
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
  /** More names for models: `{ 'gpt-4o-mini': 'primary' }`. */
  aliases?: Readonly<Record<string, string>>;
  /** The tool policy to start with (the `toolPolicy` option wins field by field). */
  toolPolicy?: Partial<ToolPolicy>;
  /** The tool service (a scenario's `tools:`), served at `POST /_stormlab/tools/{name}`; fault times since the server starts. */
  tools?: readonly ToolConfig[];
}

type ModelDefaulted = keyof typeof MODEL_DEFAULTS;

export interface FakeUpstreamOptions {
  upstream: FakeUpstreamConfig;
  port?: number;
  host?: string;
  maxBodyBytes?: number;
  defaultMaxTokens?: number;
  /** Responses answers kept (an LRU; from 1 to 1,000,000). @default 1000 */
  storedResponses?: number;
  /** A request's headers must all come within this of its first byte, else 408 and the connection closes. @default 10 s */
  headersTimeoutMs?: number;
  /** A connection with no request in flight (new, or kept alive) that sends nothing this long is closed. @default 5 s */
  idleTimeoutMs?: number;
  /** Draws for faults and service times. @default systemRandom() */
  random?: Random;
  /** @default preciseClock */
  clock?: Clock;
  observer?: FakeUpstreamObserver;
  /** A name no model or alias has: served by the first model (`default`) or answered 404 (`reject`). @default 'default' */
  unknownModels?: UnknownModels;
  /** How the model uses the tools a request offers. @default TOOL_POLICY_DEFAULTS (one tool turn, then the answer) */
  toolPolicy?: Partial<ToolPolicy>;
  /** Tool-call arguments, structured outputs, tool picks and answer lengths are drawn from it (not from `random`). @default 0 */
  seed?: number;
  /** Hears each finished model request (`stormlab serve --log FILE` writes them as JSONL). */
  requestLog?: (entry: RequestLogEntry) => void;
}

export interface FakeUpstream {
  /** `http://host:port`, no trailing slash: OpenAI SDKs take `${url}/v1`, Anthropic's `url`. */
  url: string;
  port: number;
  host: string;
  /** How long a request's headers may take and a connection may idle, ms (`headersTimeoutMs`, `idleTimeoutMs`). */
  timeouts: Readonly<ConnectionTimeouts>;
  stats(): FakeUpstreamStats;
  /** The fault phases in force, on the server's timeline (ms since start; `toMs` Infinity = forever). */
  faults(): readonly ServedFault[];
  /** Replaces the fault phases; times relative to now (default) or to the start. Throws an `OptionError` on bad input. */
  setFaults(phases: readonly FaultPhaseInput[], relativeTo?: RelativeTo): readonly ServedFault[];
  /** How many Responses answers are kept (`storedResponses`). */
  readonly storedResponses: number;
  /** The tool policy in force. */
  toolPolicy(): ToolPolicy;
  /** Changes the tool policy (fields left out stay). Throws an `OptionError` on bad input. */
  setToolPolicy(policy: Partial<ToolPolicy>): ToolPolicy;
  /** The newest `limit` model requests (all kept, up to 10,000), oldest first. */
  requests(limit?: number): RequestLogEntry[];
  /** The tool service's counters per tool (executions, duplicates per intent, conflicts); empty without tools. */
  toolStats(): ToolServiceStats[];
  /** Counters, quotas, the request log, the tool service, the stored responses and the answer lengths' draws back to zero; faults and the tool policy stay. */
  reset(): void;
  /** Stops listening, drops every connection (hanging ones too) and every timer. */
  close(): Promise<void>;
}

/**
 * The fake LLM upstream over HTTP: the simulator's `UpstreamModel` on the real clock behind an
 * OpenAI- and Anthropic-compatible API, with a control API for faults and counters.
 *
 *   POST /v1/chat/completions   OpenAI chat completions, JSON or SSE (`stream: true`), tools, response_format
 *   POST /v1/messages           Anthropic messages, JSON or SSE, tools
 *   POST /v1/responses          OpenAI Responses API, JSON or SSE, function tools, text.format, previous_response_id
 *   GET|DELETE /v1/responses/{id}  a stored Responses answer (`storedResponses` kept, least recently used out first)
 *   GET /v1/responses/{id}/input_items  the items a stored answer answered (the API's cursor page)
 *   POST /v1/embeddings         OpenAI embeddings (float or base64)
 *   GET  /v1/models             the models (Anthropic's shape when `anthropic-version` is sent)
 *   GET  /_stormlab/stats       counters per model and of the server
 *   GET  /_stormlab/faults      the fault phases in force (times since start)
 *   PUT  /_stormlab/faults      replace them: [phases] or {faults, relativeTo: now|start}
 *   GET  /_stormlab/tool-policy how the model uses tools; PUT changes it ({rounds, parallel, pick})
 *   GET  /_stormlab/output-tokens  how long answers to requests without x-stormlab-output-tokens run; PUT sets it
 *   GET  /_stormlab/requests    the request log (?limit=N): route, model, retry count, status, fault, latency
 *   POST /_stormlab/reset       counters, quotas, the request log and the tool service back to zero
 *   POST /_stormlab/tools/{name} a tool of the tool service (`tools`); GET /_stormlab/tools its counters
 *   GET  /metrics               Prometheus text
 *
 * Each model request becomes `model.submit(...)`; the answer is written when the model answers;
 * a client that leaves first becomes `model.cancel(...)`. No input takes the server down: bad
 * bodies get provider-shaped 4xx, and a failure inside one exchange ends only that exchange.
 */
export async function createFakeUpstream(options: FakeUpstreamOptions): Promise<FakeUpstream> {
  const o = { ...FAKE_UPSTREAM_DEFAULTS, ...definedOnly(options) };
  const timeouts = connectionTimeouts(o);
  const observer = options.observer ?? {};
  const counters: HttpCounters = { received: 0, invalid: 0, clientClosed: 0, internalErrors: 0 };
  const internalError = (err: unknown): void => {
    counters.internalErrors++;
    observer.error?.(err);
  };
  const scheduler = new RealTimeScheduler({ clock: options.clock, onError: internalError });
  const responses = new ResponseStore(o.storedResponses);
  const model = modelSide(options, scheduler, counters, internalError);
  const { host, log } = model;
  const policy = {
    current: parseToolPolicy(
      { ...options.upstream.toolPolicy, ...options.toolPolicy },
      TOOL_POLICY_DEFAULTS,
      'toolPolicy',
    ),
  };
  const refuse = refuser(counters);
  const readJson = jsonReader(o.maxBodyBytes, refuse);
  const stats = (): FakeUpstreamStats => ({
    nowMs: scheduler.now(),
    inFlight: log.routes.inFlight,
    lastActivityMs: log.routes.lastActivityMs,
    http: { ...counters },
    routes: log.routes.routes(),
    models: host.stats(),
  });
  const random = options.random ?? systemRandom();
  const tools = toolHost({
    tools: options.upstream.tools ?? [],
    scheduler,
    random: random instanceof SeededRandom ? random : new SeededRandom(0),
    readJson,
  });
  const reset = (): void => {
    host.reset();
    model.lengths.reset();
    tools.reset();
    responses.clear();
    log.clear();
    Object.assign(counters, { received: 0, invalid: 0, clientClosed: 0, internalErrors: 0 });
  };

  // The gate comes with the server the routes serve: until then no request waited.
  let gate: ConnectionGate | undefined;
  const waitedMs = (req: IncomingMessage): number => gate?.waitedMs(req) ?? 0;
  const routes = serverRoutes({
    o,
    options,
    model,
    policy,
    refuse,
    readJson,
    stats,
    reset,
    tools,
    waitedMs,
    responses,
  });
  const server = httpServer(routes, counters, log, refuse, internalError, timeouts);
  // Connection bursts (thousands of clients at once) are admitted, and torn down, a batch per
  // loop turn; a request held back meanwhile is timed from its arrival. Real time whatever the
  // model's clock: how long a real socket has waited.
  gate = gateConnections(server);
  // After the gate: every accepted socket, handed over yet or not, is timed from its accept.
  closeIdleConnections(server, timeouts);
  await listen(server, o.port, o.host);
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : o.port;
  const url = `http://${o.host.includes(':') ? `[${o.host}]` : o.host}:${port}`;
  let closing: Promise<void> | undefined;

  return {
    url,
    port,
    host: o.host,
    storedResponses: responses.capacity,
    timeouts,
    stats,
    faults: () => host.faults(),
    setFaults(phases, relativeTo = 'now') {
      host.setFaults(absolutePhases(phases, relativeTo, scheduler.now()));
      return host.faults();
    },
    toolPolicy: () => policy.current,
    setToolPolicy(p) {
      policy.current = parseToolPolicy(p, policy.current, 'toolPolicy');
      return policy.current;
    },
    requests: (limit) => log.list(limit),
    toolStats: () => tools.stats(),
    reset,
    close() {
      closing ??= new Promise<void>((resolve) => {
        scheduler.stop();
        model.table.stopAll();
        server.close(() => resolve());
        gate?.destroyWaiting();
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** Every route: the model API, the control API and the tool service. */
function serverRoutes(c: {
  o: typeof FAKE_UPSTREAM_DEFAULTS;
  options: FakeUpstreamOptions;
  model: ReturnType<typeof modelSide>;
  policy: { current: ToolPolicy };
  refuse: Refuse;
  readJson: ReturnType<typeof jsonReader>;
  stats: () => FakeUpstreamStats;
  reset: () => void;
  tools: ReturnType<typeof toolHost>;
  waitedMs: (req: IncomingMessage) => number;
  responses: ResponseStore;
}): Routes {
  const { o, options, model, policy, refuse, readJson, stats, reset, tools, waitedMs, responses } = c;
  return {
    ...modelRoutes({
      exchange: model.exchange,
      table: model.table,
      names: model.names,
      log: model.log,
      readText: textReader(o.maxBodyBytes, refuse),
      parseJson: jsonParser(refuse),
      refuse,
      defaultMaxTokens: o.defaultMaxTokens,
      seed: options.seed ?? 0,
      lengths: model.lengths,
      toolPolicy: () => policy.current,
      finish: model.finish,
      submitted: (name) => options.observer?.submitted?.(name),
      waitedMs,
      responses,
      maxConversationChars: o.maxBodyBytes,
    }),
    ...controlRoutes({
      host: model.host,
      now: model.exchange.now,
      stats,
      reset,
      log: model.log,
      toolPolicy: () => policy.current,
      setToolPolicy: (p) => {
        policy.current = p;
      },
      lengths: model.lengths,
      readJson,
      refuse,
    }),
    ...tools.routes,
  };
}

/**
 * The model side of the server: the upstream model on the real-time scheduler, the table of
 * exchanges in flight it answers through, the request log, and how an exchange ends (one that
 * ends before the model answered is cancelled at the model).
 */
function modelSide(
  options: FakeUpstreamOptions,
  scheduler: RealTimeScheduler,
  counters: HttpCounters,
  internalError: (err: unknown) => void,
) {
  const observer = options.observer ?? {};
  const clock = options.clock ?? preciseClock;
  const table = new ExchangeTable();
  const config = upstreamConfig(options.upstream);
  const names = new ModelNames(
    config.models.map((m) => m.name),
    options.upstream.aliases,
    options.unknownModels,
  );
  const host = new UpstreamHost(config, scheduler, options.random ?? systemRandom(), {
    onResponse(id, status, detail, tokens, retryAfterMs) {
      const ex = table.get(id);
      if (ex === undefined || ex.answered) return;
      log.outcome(ex.res, detail);
      try {
        ex.answer(status, detail, tokens, retryAfterMs);
      } catch (err) {
        internalError(err);
        ex.res.destroy();
      }
      observer.answered?.(host.names[ex.modelIndex], status);
    },
    onStream(id, event, ms, tokens) {
      const ex = table.get(id);
      if (ex === undefined || ex.answered) return;
      try {
        ex.streamEvent(event, ms, tokens);
      } catch (err) {
        internalError(err);
        ex.res.destroy();
      }
    },
  });
  const exchange: ExchangeContext = {
    host,
    now: () => scheduler.now(),
    setTimer: (ms, fn) => clock.setTimer(ms, fn),
    epochMs: Date.now() - scheduler.now(),
  };
  const log = new RequestLog(exchange.now, exchange.epochMs, options.requestLog);
  const lengths = new AnswerLengths(config.models, options.seed ?? 0);
  /** Ended before the model answered: the client left, or (response already ended) the server answered 500. */
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
    table.remove(ex);
  };
  return { host, table, names, exchange, log, finish, lengths };
}

/** The HTTP server: every request counted and routed; a malformed request line or header answered without a handler. */
function httpServer(
  routes: Routes,
  counters: HttpCounters,
  log: RequestLog,
  refuse: Refuse,
  internalError: (err: unknown) => void,
  timeouts: ConnectionTimeouts,
): Server {
  const server: Server = createServer(timeoutServerOptions(timeouts), (req, res) => {
    counters.received++;
    // A request whose client resets emits 'error' only to listeners (none: nothing to hear); a
    // response's write error would be thrown without one.
    res.on('error', ignore);
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    const key = routeKey(routes, path);
    if (path.startsWith('/v1/')) log.begin(req, res, key);
    dispatch(routes, key, path, req, res, refuse, internalError);
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable || err.code === 'ECONNRESET') return void socket.destroy();
    const status = CLIENT_ERROR_STATUS[err.code ?? ''] ?? '400 Bad Request';
    // Closed, not only ended: the server keeps half-open sockets, and a client that never
    // closes its side (a slowloris cut at its headers timeout) would hold this one for ever.
    socket.write(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    socket.destroySoon();
  });
  return server;
}

/** What a request the parser refused is answered; anything else is a 400. */
const CLIENT_ERROR_STATUS: Readonly<Record<string, string>> = {
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
};

/** The connection timeouts asked for, each a positive number of ms. */
function connectionTimeouts(o: ConnectionTimeouts): ConnectionTimeouts {
  return {
    headersTimeoutMs: checkPositive('headersTimeoutMs', o.headersTimeoutMs),
    idleTimeoutMs: checkPositive('idleTimeoutMs', o.idleTimeoutMs),
  };
}

/** The upstream as the model takes it: model defaults filled in, fault times absolute. */
function upstreamConfig(upstream: FakeUpstreamConfig): UpstreamConfig {
  return {
    models: upstream.models.map((m) => ({ ...MODEL_DEFAULTS, ...m })),
    faults: absolutePhases(upstream.faults ?? [], 'start', 0),
    cancelOnDisconnect: upstream.cancelOnDisconnect ?? false,
  };
}

/** Finds the handler for route `key` (of `path`) and method; 404 / 405 otherwise; a handler that throws answers 500 (or drops a started answer). */
function dispatch(
  routes: Routes,
  key: string,
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
  refuse: Refuse,
  internalError: (err: unknown) => void,
): void {
  const route = routes[key];
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
  const failed = (err: unknown): void => {
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
  };
  try {
    const done = handler(req, res, failed);
    if (done !== undefined) done.catch(failed);
  } catch (err) {
    failed(err);
  }
}

/** The `error` listener of every response: a client's reset ends only its exchange. */
function ignore(): void {}

/** Anthropic's SDK sends `anthropic-version`; anything else is answered the OpenAI way. */
function dialectOf(req: IncomingMessage): Dialect {
  return req.headers['anthropic-version'] !== undefined ? anthropicDialect : openaiDialect;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, backlog: CONNECTION_GATE_DEFAULTS.backlog }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
