import { OptionError } from '../../engine/errors.js';
import { ANSWER_TOKENS_DEFAULT } from '../../fake-upstream/answer-length.js';
import { DEFAULT_UPSTREAM } from '../../fake-upstream/default-upstream.js';
import type { AnswerTokens } from '../../upstream/config.js';
import { meanOf } from '../../upstream/distribution.js';
import type { ServedFault } from '../../fake-upstream/fault-phases.js';
import { createFakeUpstream, type FakeUpstream, type FakeUpstreamConfig } from '../../fake-upstream/server.js';
import { EXIT, stopCause, stopExit, UsageError, type Io } from '../io.js';
import { scenarioFromFlags } from '../scenario-from-flags.js';
import { formatDuration } from '../../upstream/duration.js';
import {
  applyAnswerTokens,
  connectionTimeoutsOf,
  applyModels,
  requestLogFile,
  seedOf,
  storedResponsesOf,
  type ServeModelFlags,
  toolPolicyOf,
} from './serve-flags.js';
import { SERVE_DEFAULTS } from './serve-defaults.js';

export interface ServeFlags extends ServeModelFlags {
  port?: string;
  host?: string;
  scenario?: string;
}

export const ROUTES: ReadonlyArray<[string, string]> = [
  ['POST /v1/chat/completions', 'OpenAI chat completions (stream: true for SSE)'],
  ['POST /v1/messages', 'Anthropic messages (stream: true for SSE)'],
  ['POST /v1/responses', 'OpenAI Responses API (stream: true for SSE, previous_response_id)'],
  ['GET  /v1/responses/ID', 'a stored response (store: true, the default)'],
  ['DELETE /v1/responses/ID', 'forget it: previous_response_id then gets 400'],
  ['POST /v1/embeddings', 'OpenAI embeddings'],
  ['GET  /v1/models', 'the models (any other name is served by the first one)'],
  ['GET  /_stormlab/stats', 'counters per model: attempts, statuses, busy, queued, wasted tokens'],
  ['GET  /_stormlab/faults', 'the fault phases in force (ms since start)'],
  ['PUT  /_stormlab/faults', 'replace them: [{"kind":"outage","toMs":10000}] (ms from now)'],
  ['PUT  /_stormlab/tool-policy', 'how the model uses tools: {"rounds":2,"parallel":1}'],
  ['GET  /_stormlab/requests', 'the request log: route, model, retry count, status, fault, latency'],
  ['POST /_stormlab/tools/NAME', 'a tool of the scenario (tools:): {"intent":"…"}, idempotency-key header'],
  ['GET  /_stormlab/tools', 'the tool service: executions, duplicates per intent, conflicts, replays'],
  ['POST /_stormlab/reset', 'counters, quotas, the request log and the tool service back to zero'],
  ['GET  /metrics', 'Prometheus text'],
];

/** Starts the server `stormlab serve` describes, and says where it listens and what it serves. */
export async function startServe(io: Io, flags: ServeFlags): Promise<FakeUpstream> {
  const port = parsePort(flags.port ?? SERVE_DEFAULTS.port);
  const host = flags.host ?? SERVE_DEFAULTS.host;
  if (host.trim() === '') throw new UsageError('--host: expected an address like 127.0.0.1 or 0.0.0.0, got ""');
  const upstream: FakeUpstreamConfig = applyAnswerTokens(
    applyModels(
      flags.scenario === undefined ? DEFAULT_UPSTREAM : scenarioFromFlags(flags.scenario, {}, io.cwd).upstream,
      flags.models,
    ),
    flags.answerTokens,
  );
  const toolPolicy = toolPolicyOf(flags);
  const seed = seedOf(flags.seed);
  const storedResponses = storedResponsesOf(flags.storedResponses);
  const timeouts = connectionTimeoutsOf(flags);
  const log = requestLogFile(flags.log, io.cwd);
  let server: FakeUpstream;
  try {
    server = await createFakeUpstream({
      upstream,
      port,
      host,
      toolPolicy,
      seed,
      storedResponses,
      ...timeouts,
      unknownModels: flags.strictModels === true ? 'reject' : 'default',
      requestLog: log?.write,
      observer: {
        error: (err) =>
          io.stderr(
            `stormlab serve: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
          ),
      },
    });
  } catch (e) {
    log?.close();
    // A scenario's aliases or tool policy the server refuses: one line naming where they came from.
    if (e instanceof OptionError) throw new UsageError(`${flags.scenario ?? 'serve'}: upstream.${e.message}`);
    throw listenError(e, port, host);
  }
  if (log !== undefined) {
    const close = server.close;
    server.close = () => close().finally(log.close);
  }
  const from = flags.scenario === undefined ? '' : ` (from ${flags.scenario})`;
  const lines = [
    `stormlab fake upstream listening on ${server.url}`,
    `models: ${upstream.models.map((m) => m.name).join(', ')}${from}${aliasText(upstream)}; ${flags.strictModels === true ? 'other names get 404' : `other names are served by ${upstream.models[0]?.name}`}`,
    `tools: ${server.toolPolicy().rounds} tool turn(s) before the answer, ${server.toolPolicy().parallel} call(s) a turn${flags.log === undefined ? '' : `; request log: ${flags.log}`}`,
    `answers: ${describeAnswers(upstream.models[0]?.answerTokens ?? ANSWER_TOKENS_DEFAULT)}`,
    `responses: the last ${server.storedResponses} stored are kept for previous_response_id and GET /v1/responses/ID; older ids get 400`,
    `faults: ${describeFaults(server.faults())}`,
    `connections: headers due ${formatDuration(server.timeouts.headersTimeoutMs)} after a request's first byte (else 408), closed after ${formatDuration(server.timeouts.idleTimeoutMs)} idle`,
    '',
    ...routeLines(ROUTES),
    '',
    `OpenAI SDK: new OpenAI({ baseURL: '${server.url}/v1', apiKey: 'any' })`,
    `Anthropic SDK: new Anthropic({ baseURL: '${server.url}', apiKey: 'any' })`,
    'Ctrl-C stops it.',
  ];
  io.stdout(`${lines.join('\n')}\n`);
  return server;
}

/**
 * `stormlab serve`: runs the fake upstream until `until` settles — by default until SIGINT or
 * SIGTERM reach the process (`io.onStop`) — then closes it and every connection.
 */
export async function serveCommand(
  io: Io,
  flags: ServeFlags,
  until: Promise<unknown> = stopRequested(io),
): Promise<number> {
  const server = await startServe(io, flags);
  const why = await until.catch(() => undefined);
  io.stdout(`stopping${typeof why === 'string' ? ` (${why})` : ''}\n`);
  await server.close();
  // Stopped by a signal, it exits as a shell reports one (130, 143), after the clean close;
  // stopped by its caller's promise, with nothing to report, 0.
  return typeof why === 'string' ? stopExit(stopCause(why)) : EXIT.ok;
}

/** The routes as two columns: each route padded to the longest one and two spaces, so none runs into its text. */
export function routeLines(routes: ReadonlyArray<readonly [string, string]>): string[] {
  const width = Math.max(...routes.map(([route]) => route.length)) + 2;
  return routes.map(([route, what]) => `  ${route.padEnd(width)}${what}`);
}

function aliasText(upstream: FakeUpstreamConfig): string {
  const a = Object.entries(upstream.aliases ?? {});
  return a.length === 0 ? '' : ` (aliases: ${a.map(([k, v]) => `${k}=${v}`).join(', ')})`;
}

export function stopRequested(io: Io): Promise<unknown> {
  return new Promise((resolve) => io.onStop?.(resolve));
}

export function parsePort(raw: string): number {
  const n = Number(raw);
  if (!/^\s*\d+\s*$/.test(raw) || n > 65535)
    throw new UsageError(`--port: expected a port from 0 to 65535 (0 picks a free one), got ${JSON.stringify(raw)}`);
  return n;
}

const LISTEN_ERRORS: Record<string, string> = {
  EADDRINUSE: 'the port is already in use',
  EACCES: 'permission denied (ports below 1024 need privileges)',
  EADDRNOTAVAIL: "the address is not one of this machine's",
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name does not resolve',
};

export function listenError(e: unknown, port: number, host: string): unknown {
  const code = (e as NodeJS.ErrnoException).code ?? '';
  const why = LISTEN_ERRORS[code];
  return why === undefined ? e : new UsageError(`cannot listen on ${host}:${port}: ${why}`);
}

/** How long the first model's answers run, and how a client asks for an exact length. */
function describeAnswers(a: AnswerTokens): string {
  if (a === 'max') return 'exactly max_tokens long';
  const length =
    typeof a === 'number'
      ? `${a} tokens`
      : a.dist === 'lognormal'
        ? `a natural length (median ${a.median} tokens)`
        : `a natural length (mean ${Math.round(meanOf(a))} tokens)`;
  return `${length}, cut at max_tokens (finish_reason length); header x-stormlab-output-tokens: max for exactly max_tokens`;
}

/** `outage primary 0s–3m0s status 503; latency ×4 10s–…` */
export function describeFaults(faults: readonly ServedFault[]): string {
  if (faults.length === 0) return 'none';
  const time = (ms: number) => (ms === Infinity ? '…' : `${Math.round(ms) / 1000}s`);
  return faults
    .map((f) => {
      const parts: string[] = [f.kind];
      if (f.model !== undefined) parts.push(f.model);
      parts.push(`${time(f.fromMs)}–${time(f.toMs)}`);
      if (f.rate !== 1) parts.push(`rate ${f.rate}`);
      if (f.status !== undefined)
        parts.push(`status ${typeof f.status === 'number' ? f.status : JSON.stringify(f.status)}`);
      if (f.factor !== undefined) parts.push(`×${f.factor}`);
      return parts.join(' ');
    })
    .join('; ');
}
