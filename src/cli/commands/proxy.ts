import { resolve } from 'node:path';
import { OptionError } from '../../engine/errors.js';
import { SeededRandom } from '../../engine/random.js';
import type { FaultPhaseInput } from '../../fake-upstream/fault-phases.js';
import { createProxy, type StormlabProxy } from '../../proxy/proxy-server.js';
import { FAULTS_MAX_BYTES, readBoundedFile, UnreadableFile } from '../../scenario/read-bounded-file.js';
import { EXIT, stopCause, stopExit, UsageError, type Io } from '../io.js';
import { scenarioFromFlags } from '../scenario-from-flags.js';
import { requestLogFile } from './serve-flags.js';
import { describeFaults, listenError, parsePort, routeLines, stopRequested } from './serve.js';
import { PROXY_FLAG_DEFAULTS } from './serve-defaults.js';

export interface ProxyFlags {
  upstream?: string;
  port?: string;
  host?: string;
  scenario?: string;
  faults?: string;
  rpm?: string;
  tpm?: string;
  seed?: string;
  log?: string;
}

const CONTROL: ReadonlyArray<[string, string]> = [
  [
    'GET  /_stormlab/stats',
    "counters as serve's: routes, models (attempts, statuses, tokens), proxy (forwarded, unknown)",
  ],
  ['GET  /_stormlab/faults', 'the fault phases in force (ms since start)'],
  ['PUT  /_stormlab/faults', 'replace them: [{"kind":"errors","status":429,"rate":0.3}] (ms from now)'],
  ['GET  /_stormlab/requests', 'the request log: route, model, retry count, status, fault, latency'],
  ['POST /_stormlab/reset', 'counters, quotas and the request log back to zero'],
  ['GET  /metrics', 'Prometheus text'],
];

/**
 * A scenario's fault phases for the proxy. A model's `continuation` declaration is refused: the
 * proxy does not read conversations, so whether a prefill is continued is the upstream's own.
 */
function scenarioFaults(file: string, cwd: string): FaultPhaseInput[] {
  const upstream = scenarioFromFlags(file, {}, cwd).upstream;
  const i = upstream.models.findIndex((m) => m.continuation !== undefined);
  if (i >= 0)
    throw new UsageError(
      `--scenario ${file}: upstream.models[${i}].continuation cannot be honoured by a proxy: it does not read conversations, so whether a prefill is continued is the upstream's own (serve models it)`,
    );
  return upstream.faults;
}

/** Starts the proxy `stormlab proxy` describes, and says where it listens and what it does. */
export async function startProxy(io: Io, flags: ProxyFlags): Promise<StormlabProxy> {
  if (flags.upstream === undefined || flags.upstream.trim() === '')
    throw new UsageError('--upstream: required, the server to put the proxy in front of (http://127.0.0.1:11434)');
  if (flags.scenario !== undefined && flags.faults !== undefined)
    throw new UsageError('--faults and --scenario both give fault phases: give one');
  const port = parsePort(flags.port ?? PROXY_FLAG_DEFAULTS.port);
  const host = flags.host ?? PROXY_FLAG_DEFAULTS.host;
  const faults =
    flags.faults !== undefined
      ? faultsFile(io, flags.faults)
      : flags.scenario !== undefined
        ? scenarioFaults(flags.scenario, io.cwd)
        : [];
  const quotas = { rpm: perMinute('--rpm', flags.rpm), tpm: perMinute('--tpm', flags.tpm) };
  const seed = flags.seed === undefined ? undefined : wholeNumber('--seed', flags.seed);
  const log = requestLogFile(flags.log, io.cwd);
  let proxy: StormlabProxy;
  try {
    proxy = await createProxy({
      upstream: flags.upstream,
      port,
      host,
      faults,
      quotas,
      random: seed === undefined ? undefined : new SeededRandom(seed),
      requestLog: log?.write,
      observer: {
        error: (err) =>
          io.stderr(
            `stormlab proxy: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
          ),
      },
    });
  } catch (e) {
    log?.close();
    const from = flags.faults ?? flags.scenario;
    if (e instanceof OptionError)
      throw new UsageError(e.option === 'upstream' ? `--upstream: ${e.problem}` : `${from ?? 'proxy'}: ${e.message}`);
    throw listenError(e, port, host);
  }
  if (log !== undefined) {
    const close = proxy.close;
    proxy.close = () => close().finally(log.close);
  }
  const limits = [quotas.rpm && `${quotas.rpm} requests/min`, quotas.tpm && `${quotas.tpm} tokens/min`].filter(Boolean);
  const lines = [
    `stormlab proxy listening on ${proxy.url}, in front of ${flags.upstream}`,
    `faults: ${describeFaults(proxy.faults())}${flags.faults !== undefined || flags.scenario !== undefined ? ` (from ${flags.faults ?? flags.scenario})` : ''}`,
    `limits per model: ${limits.length === 0 ? 'none' : limits.join(', ')}${flags.log === undefined ? '' : `; request log: ${flags.log}`}`,
    'model routes read (others go through untouched): POST /v1/chat/completions, /v1/messages, /v1/responses, /v1/embeddings',
    '',
    ...routeLines(CONTROL),
    '',
    `OpenAI SDK: new OpenAI({ baseURL: '${proxy.url}/v1', apiKey })`,
    `Anthropic SDK: new Anthropic({ baseURL: '${proxy.url}', apiKey })`,
    'Ctrl-C stops it.',
  ];
  io.stdout(`${lines.join('\n')}\n`);
  return proxy;
}

/** `stormlab proxy`: runs until SIGINT or SIGTERM (or `until`), then closes every connection. */
export async function proxyCommand(
  io: Io,
  flags: ProxyFlags,
  until: Promise<unknown> = stopRequested(io),
): Promise<number> {
  const proxy = await startProxy(io, flags);
  const why = await until.catch(() => undefined);
  io.stdout(`stopping${typeof why === 'string' ? ` (${why})` : ''}\n`);
  await proxy.close();
  // Stopped by a signal, it exits as a shell reports one (130, 143), as serve does.
  return typeof why === 'string' ? stopExit(stopCause(why)) : EXIT.ok;
}

/** `--faults FILE`: phases as `PUT /_stormlab/faults` takes them (a list, or `{faults: [...]}`), times from the start. */
function faultsFile(io: Io, file: string): FaultPhaseInput[] {
  let text: string;
  try {
    text = readBoundedFile(resolve(io.cwd, file), FAULTS_MAX_BYTES);
  } catch (e) {
    if (!(e instanceof UnreadableFile)) throw e;
    throw new UsageError(`--faults: cannot read ${file}: ${e.reason}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`--faults: ${file} is not JSON (${(e as Error).message})`);
  }
  const list = Array.isArray(value) ? value : (value as { faults?: unknown } | null)?.faults;
  if (!Array.isArray(list))
    throw new UsageError(`--faults: ${file} must hold a list of fault phases, or {"faults": [...]}`);
  return list as FaultPhaseInput[];
}

function perMinute(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = wholeNumber(flag, raw);
  if (n < 1) throw new UsageError(`${flag}: expected a whole number >= 1, got ${JSON.stringify(raw)}`);
  return n;
}

function wholeNumber(flag: string, raw: string): number {
  if (!/^\s*\d+\s*$/.test(raw)) throw new UsageError(`${flag}: expected a whole number, got ${JSON.stringify(raw)}`);
  return Number(raw);
}
