import autocannon from 'autocannon';
import { connect, type Socket } from 'node:net';
import { Pool } from 'undici';
import { LiveRun } from '../src/run/live/live-run.js';
import type { RunSpec } from '../src/run/run-spec.js';
import type { EngineConfig, RetryPolicy } from '../src/traffic/config.js';

/**
 * One load run for the live suite, in a process of its own:
 *
 *   node --import tsx bench/live-load-child.ts <mode> <url> <inFlight> <seconds> <connections>
 *
 * `bare`: `inFlight` loops, each sending the chat completion the live driver sends and reading
 * the answer, through one undici `Pool`'s `request` (promise, body stream). `dispatch`: the same
 * loops on `Pool.dispatch` with a plain handler, the lowest layer undici has. `autocannon`:
 * autocannon's programmatic API, `inFlight` connections, the same body. `driver`: the live driver
 * (`LiveRun`) with `inFlight` closed-loop users and no think time at one layer, so it keeps as
 * many requests in flight; `driver-engine` the same with the engine on that layer. Requests/s
 * are counted after a one-second warm-up. Prints one JSON line: requests/s, requests counted,
 * answers that were not 200 or never came, p99 latency (ms; the driver's from each root's
 * intended start), peak RSS.
 */
const [mode = 'bare', url = '', inFlightArg = '128', secondsArg = '6', connectionsArg = '128'] = process.argv.slice(2);
const inFlight = Number(inFlightArg);
const seconds = Number(secondsArg);
const connections = Number(connectionsArg);
const WARMUP_MS = 1000;
/** The engine's defaults, as a scenario without an `engine:` block resolves them. */
const ENGINE: EngineConfig = {
  maxAttempts: 3,
  backoff: {},
  retryBudget: {},
  throttle: {},
  breaker: {},
  limits: [],
  concurrency: false,
  minAttemptMs: 0,
};
const PROMPT_TOKENS = 100;
/** The headers the live driver sends: its answers are exactly max_tokens long (`x-stormlab-output-tokens: max`). */
const HEADERS = { 'content-type': 'application/json', 'x-stormlab-output-tokens': 'max' };
const MAX_TOKENS = 16;

/** The request body the live driver sends for a 100-token prompt (see `HttpTransport`). */
function body(): string {
  const content = 'the storm passes when retries stay within their budget and every layer keeps its calm. '
    .repeat(8)
    .slice(0, (PROMPT_TOKENS - 4) * 3);
  return JSON.stringify({ model: 'primary', messages: [{ role: 'user', content }], max_tokens: MAX_TOKENS });
}

interface Out {
  rps: number;
  counted: number;
  failed: number;
  /** CPU time of this process per request counted (user + system, µs): steadier than requests/s on a busy machine. */
  cpuUsPerRequest: number;
  /** 99th percentile latency, ms (0 where the mode does not measure it). */
  p99Ms: number;
}

/** CPU time used between `WARMUP_MS` and `WARMUP_MS + seconds` after now (the counted window). */
function cpuWindow(): Promise<number> {
  let c0: NodeJS.CpuUsage | undefined;
  setTimeout(() => (c0 = process.cpuUsage()), WARMUP_MS);
  return new Promise((resolve) =>
    setTimeout(
      () => {
        const d = process.cpuUsage(c0);
        resolve(d.user + d.system);
      },
      WARMUP_MS + seconds * 1000,
    ),
  );
}

async function bare(): Promise<Out> {
  const pool = new Pool(url, { connections, pipelining: 1, headersTimeout: 0, bodyTimeout: 0 });
  const cpu = cpuWindow();
  const start = performance.now();
  const from = start + WARMUP_MS;
  const until = start + WARMUP_MS + seconds * 1000;
  let counted = 0;
  let failed = 0;
  const payload = body(); // built once: the least a client can do
  const loop = async (): Promise<void> => {
    while (performance.now() < until) {
      try {
        const res = await pool.request({
          path: '/v1/chat/completions',
          method: 'POST',
          headers: HEADERS,
          body: payload,
        });
        await res.body.text();
        if (res.statusCode !== 200) failed++;
      } catch {
        failed++;
      }
      const t = performance.now();
      if (t >= from && t < until) counted++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, loop));
  await pool.close();
  return { rps: counted / seconds, counted, failed, cpuUsPerRequest: (await cpu) / counted, p99Ms: 0 };
}

/** The bare loop on `Pool.dispatch`: one handler object per request, the body read as bytes and dropped. */
async function bareDispatch(): Promise<Out> {
  const pool = new Pool(url, { connections, pipelining: 1, headersTimeout: 0, bodyTimeout: 0 });
  const cpu = cpuWindow();
  const start = performance.now();
  const from = start + WARMUP_MS;
  const until = start + WARMUP_MS + seconds * 1000;
  let counted = 0;
  let failed = 0;
  const payload = Buffer.from(body());
  const opts = {
    path: '/v1/chat/completions',
    method: 'POST' as const,
    headers: HEADERS,
    body: payload,
  };
  let loops = inFlight;
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const next = (): void => {
    const t = performance.now();
    if (t >= from && t < until) counted++;
    if (t >= until) {
      if (--loops === 0) done();
      return;
    }
    send();
  };
  const send = (): void => {
    let status = 0;
    pool.dispatch(opts, {
      onConnect() {},
      onHeaders(s: number) {
        status = s;
        return true;
      },
      onData() {
        return true;
      },
      onComplete() {
        if (status !== 200) failed++;
        next();
      },
      onError() {
        failed++;
        next();
      },
    });
  };
  for (let i = 0; i < inFlight; i++) send();
  await finished;
  await pool.close();
  return { rps: counted / seconds, counted, failed, cpuUsPerRequest: (await cpu) / counted, p99Ms: 0 };
}

/** autocannon against the same URL and body: a warm-up second, then the counted run. */
async function cannon(): Promise<Out> {
  const opts = {
    url: `${url}/v1/chat/completions`,
    method: 'POST' as const,
    headers: HEADERS,
    body: body(),
    connections: inFlight,
    pipelining: 1,
  };
  await autocannon({ ...opts, duration: WARMUP_MS / 1000 });
  const c0 = process.cpuUsage();
  const r = await autocannon({ ...opts, duration: seconds });
  const c = process.cpuUsage(c0);
  const counted = r.requests.total;
  return {
    rps: counted / seconds,
    counted,
    failed: r.non2xx + r.errors + r.timeouts,
    cpuUsPerRequest: (c.user + c.system) / counted,
    p99Ms: r.latency.p99,
  };
}

async function driver(engine: boolean): Promise<Out> {
  const retry: RetryPolicy = engine ? { policy: 'engine', engine: {} } : { policy: 'none' };
  const durationMs = WARMUP_MS + seconds * 1000;
  const spec: RunSpec = {
    name: mode,
    seed: 1,
    durationMs,
    drainMs: 10_000,
    traffic: {
      arrival: { type: 'closed', users: inFlight, thinkMs: 0 },
      deadlineMs: Infinity,
      layers: [{ name: 'llm', fanout: 1, timeoutMs: Infinity, retry, models: ['primary'] }],
      tokens: { prompt: PROMPT_TOKENS, completion: MAX_TOKENS },
      engine: ENGINE,
    },
    upstream: {
      cancelOnDisconnect: false,
      faults: [],
      models: [
        {
          name: 'primary',
          slots: 1,
          queue: 0,
          shedStatus: 529,
          ttftMs: 0,
          tpotMs: 0,
          loadStretch: 0,
          contextTokens: Infinity,
        },
      ],
    },
  };
  const run = new LiveRun(spec, { connections });
  const cpu = cpuWindow();
  await run.start({ url });
  const r = run.result();
  await run.close();
  // Whole seconds after the warm-up, from the per-second series.
  const bins = r.series.upstreamAttempts.slice(WARMUP_MS / 1000, durationMs / 1000);
  const counted = bins.reduce((a, b) => a + b, 0);
  const ok = r.upstream.status['200'] ?? 0;
  return {
    rps: counted / bins.length,
    counted,
    failed: r.upstream.attempts - ok,
    cpuUsPerRequest: (await cpu) / counted,
    p99Ms: r.roots.latencyMs.p99,
  };
}

/**
 * `held`: `inFlight` streamed requests at once, each on a connection of its own, three ways a
 * burst hits the server: all arrive at once and are answered; their connections then close at
 * once (idle, keep-alive); a second wave arrives at once and is abandoned at once mid-answer
 * (client disconnects: cancellations). `seconds` is the time a wave may take.
 *
 * Plain sockets and a hand-written request rather than an HTTP client: each request is written
 * the moment its connection is up, so a first byte is timed both from the start of the wave
 * (`p50Ms`, `p99Ms`: what the load tool saw, its own time to open 5,000 connections included)
 * and from the moment its request went out (`writtenP50Ms`, `writtenP99Ms`: the server's part,
 * which the configured time to first token is measured against).
 */
async function held(): Promise<Out & { p50Ms: number; maxMs: number; writtenP50Ms: number; writtenP99Ms: number }> {
  const payload = JSON.stringify({ ...JSON.parse(body()), stream: true, stream_options: { include_usage: true } });
  const { hostname, port } = new URL(url);
  const request = Buffer.from(
    `POST /v1/chat/completions HTTP/1.1\r\nhost: ${hostname}:${port}\r\n` +
      Object.entries(HEADERS)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('') +
      `content-length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`,
  );
  let failed = 0;
  const errorCodes = new Map<string, number>();
  /** One wave: the first-byte times from the wave's start and from each write, and its sockets (open). */
  const wave = (abortAfterMs: number): Promise<{ fromStart: number[]; fromWrite: number[]; sockets: Socket[] }> =>
    new Promise((resolve) => {
      const fromStart: number[] = [];
      const fromWrite: number[] = [];
      const sockets: Socket[] = [];
      let left = inFlight;
      const finish = (): void => resolve({ fromStart, fromWrite, sockets });
      const settle = (): void => {
        if (--left === 0) finish();
      };
      const started = performance.now();
      for (let i = 0; i < inFlight; i++) {
        let written = 0;
        let first = true;
        let settled = false;
        let tail = '';
        const done = (ok: boolean, code?: string): void => {
          if (settled) return;
          settled = true;
          if (!ok && abortAfterMs === 0) {
            failed++;
            errorCodes.set(code ?? 'unknown', (errorCodes.get(code ?? 'unknown') ?? 0) + 1);
          }
          settle();
        };
        const s = connect({ host: hostname, port: Number(port), noDelay: true }, () => {
          written = performance.now();
          s.write(request);
        });
        sockets.push(s);
        s.on('data', (d: Buffer) => {
          if (first) {
            const t = performance.now();
            fromStart.push(t - started);
            fromWrite.push(t - written);
            first = false;
            if (d.toString('latin1', 0, 12) !== 'HTTP/1.1 200')
              return done(false, `status ${d.toString('latin1', 9, 12)}`);
          }
          // The chunked body's last chunk ends the answer (the connection stays open: keep-alive).
          tail = (tail + d.toString('latin1')).slice(-7);
          if (tail === '\r\n0\r\n\r\n') done(true);
        });
        s.on('error', (err: Error & { code?: string }) => done(false, err.code ?? err.name));
        s.on('close', () => done(false, 'closed'));
      }
      if (abortAfterMs > 0)
        setTimeout(() => {
          for (const s of sockets) s.destroy();
        }, abortAfterMs);
      setTimeout(finish, seconds * 1000).unref();
    });
  const c0 = process.cpuUsage();
  // STALL_LOG=1: the phases on stderr, with the time (to match the server's stall log).
  const log = (m: string) => process.env.STALL_LOG && console.error(`${m} at ${new Date().toISOString()}`);
  log('wave 1 sent');
  const w1 = await wave(0);
  log('wave 1 done; closing');
  for (const s of w1.sockets) s.destroy(); // every idle connection closes at once
  log('closed');
  await wave(1000);
  log('wave 2 abandoned');
  const c = process.cpuUsage(c0);
  if (errorCodes.size > 0) console.error('held: errors', Object.fromEntries(errorCodes));
  const times = w1.fromStart.sort((a, b) => a - b);
  const fromWrite = w1.fromWrite.sort((a, b) => a - b);
  const at = (xs: number[], q: number): number =>
    xs.length > 0 ? xs[Math.min(xs.length - 1, Math.floor(q * xs.length))] : 0;
  return {
    rps: 0,
    counted: times.length,
    failed: Math.max(failed, inFlight - times.length), // an error or a stream that never started
    cpuUsPerRequest: (c.user + c.system) / (2 * inFlight),
    p99Ms: at(times, 0.99),
    p50Ms: at(times, 0.5),
    maxMs: times.length > 0 ? times[times.length - 1] : 0,
    writtenP50Ms: at(fromWrite, 0.5),
    writtenP99Ms: at(fromWrite, 0.99),
  };
}

const MODES: Record<string, () => Promise<Out>> = {
  held,
  bare,
  dispatch: bareDispatch,
  autocannon: cannon,
  driver: () => driver(false),
  'driver-engine': () => driver(true),
};
const run = MODES[mode];
if (run === undefined) throw new Error(`live-load-child: unknown mode ${mode} (${Object.keys(MODES).join(', ')})`);
const out = await run();
console.log(JSON.stringify({ mode, ...out, peakRssMb: process.resourceUsage().maxRSS / 1024 }));
