import { Pool } from 'undici';
import { LiveRun } from '../src/run/live/live-run.js';
import { initHistograms } from '../src/run/metrics/histogram.js';
import type { RunSpec } from '../src/run/run-spec.js';
import type { EngineConfig, RetryPolicy } from '../src/traffic/config.js';

/**
 * One load run for the live suite, in a process of its own:
 *
 *   node --import tsx bench/live-load-child.ts <bare|driver|driver-engine> <url> <inFlight> <seconds> <connections>
 *
 * `bare`: `inFlight` loops, each sending the chat completion the live driver sends and reading
 * the answer, through one undici `Pool` — the least a client can do. `driver`: the live driver
 * (`LiveRun`) with `inFlight` closed-loop users and no think time at one layer, so it keeps as
 * many requests in flight; `driver-engine` the same with the engine on that layer. Requests/s
 * are counted after a one-second warm-up. Prints one JSON line: requests/s, requests counted,
 * answers that were not 200 or never came, peak RSS.
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
          headers: { 'content-type': 'application/json' },
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
  return { rps: counted / seconds, counted, failed, cpuUsPerRequest: (await cpu) / counted };
}

async function driver(engine: boolean): Promise<Out> {
  await initHistograms();
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
  };
}

const out = mode === 'bare' ? await bare() : await driver(mode === 'driver-engine');
console.log(JSON.stringify({ mode, ...out, peakRssMb: process.resourceUsage().maxRSS / 1024 }));
