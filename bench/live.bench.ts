import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { compileChildren } from './compile-children.js';
import { median, printTable, type Row } from './measure.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVER = fileURLToPath(new URL('./live-server-child.ts', import.meta.url));
const LOAD = fileURLToPath(new URL('./live-load-child.ts', import.meta.url));

/** Requests kept in flight and pool connections for the throughput runs. */
const IN_FLIGHT = 256;
const SECONDS = 5;
const ROUNDS = 3;
/** The streams run: this many streams at once, first token after 2 s (the burst the fake upstream must spread). */
const STREAMS = 5_000;
const STREAM_TTFT_MS = 2_000;
/** Runs of the streams phase, each against a server of its own: its figures move from run to run. */
const STREAM_ROUNDS = 3;
/** Seconds a wave of streams may take before the client gives up on it. */
const STREAM_WAVE_SECONDS = 20;
/** The memory run: this many 2-second requests in flight at once, one connection each. */
const HELD = 5_000;
const HELD_MS = 2_000;
/** Seconds of load after the warm-up second: enough for the second wave of 5,000 to be held too. */
const HELD_SECONDS = 4;

interface Load {
  mode: string;
  rps: number;
  counted: number;
  failed: number;
  cpuUsPerRequest: number;
  p99Ms: number;
  /** `held` only: first-byte p50 and worst from the wave's start, and p50 and p99 from each request's write, ms. */
  p50Ms?: number;
  maxMs?: number;
  writtenP50Ms?: number;
  writtenP99Ms?: number;
  peakRssMb: number;
}

/** The children, compiled (see `compileChildren`). */
const CHILDREN = { server: '', load: '' };

async function compileLiveChildren(): Promise<void> {
  const c = await compileChildren({ 'live-server-child': SERVER, 'live-load-child': LOAD });
  CHILDREN.server = c['live-server-child'];
  CHILDREN.load = c['live-load-child'];
}

interface ServerFigures {
  peakRssMb: number;
  maxInFlight: number;
  served: number;
  cpuUsPerRequest: number;
  maxStallMs: number;
  maxStallCpuMs: number;
  /** Of the worst timer-drift stall, the time the main thread waited for a core, ms. */
  maxStallWaitMs: number;
  /** The longest garbage collection pause, ms. */
  maxGcMs: number;
}

/** A server child, listening; `stop()` ends it and gives its peak RSS. */
async function server(kind: 'fake' | 'minimal', ttftMs = 0): Promise<{ url: string; stop(): Promise<ServerFigures> }> {
  const child: ChildProcess = spawn(process.execPath, [CHILDREN.server, kind, String(ttftMs)], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.done) throw new Error(`live bench: the ${kind} server did not start`);
  const { url } = JSON.parse(first.value) as { url: string };
  return {
    url,
    async stop() {
      child.stdin!.end();
      const last = await lines.next();
      if (last.done) throw new Error(`live bench: the ${kind} server ended without its figures`);
      return JSON.parse(last.value) as ServerFigures;
    },
  };
}

type LoadMode = 'bare' | 'dispatch' | 'autocannon' | 'driver' | 'driver-engine' | 'held';

/** One load run in a child process (blocking: the server runs in its own). */
function load(mode: LoadMode, url: string, inFlight = IN_FLIGHT, seconds = SECONDS, connections = IN_FLIGHT): Load {
  const r = spawnSync(
    process.execPath,
    [CHILDREN.load, mode, url, String(inFlight), String(seconds), String(connections)],
    { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 20 },
  );
  if (r.status !== 0) throw new Error(`live bench load (${mode}) failed with ${r.status ?? r.signal}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Load;
}

/**
 * Connections the kernel dropped because a listen queue was full (Linux `TcpExt ListenOverflows`,
 * all sockets; -1 where it cannot be read). The queue holds `net.core.somaxconn` (often 4096):
 * a burst larger than that which the server does not accept as it comes loses connections, whose
 * clients retry a second (then three) later — first bytes a second late that no server work explains.
 */
function listenOverflows(): number {
  try {
    const rows = readFileSync('/proc/net/netstat', 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('TcpExt:'));
    const [names, values] = rows.map((r) => r.split(/\s+/));
    const i = names.indexOf('ListenOverflows');
    return i > 0 ? Number(values[i]) : -1;
  } catch {
    return -1;
  }
}

const ratio = (a: number, b: number): number => (b > 0 ? a / b : 0);
const pct = (x: number): string => `${(x * 100).toFixed(0)} %`;

/**
 * The live suite. Each figure is compared with its baseline in the same run, rounds
 * interleaved (A, B, A, B, …) so a busy machine slows both alike; the median round counts.
 *
 * 1. Clients against one `stormlab serve` (the fake upstream, a zero-latency model): autocannon
 *    (the baseline), the live driver without and with the engine, and two plain undici loops —
 *    `pool.request` and `Pool.dispatch` with a handler — to show what undici's layers cost.
 *    Goals: driver ≥ 95 % of autocannon's requests/s with p99 within 5 ms; engine on ≥ 85 %.
 * 2. Servers: the fake upstream vs a minimal `node:http` server answering the same JSON, both
 *    loaded by autocannon (goal: fake ≥ 90 % of minimal).
 * 3. Streams: 5,000 streamed requests arrive at once (first token configured at 2 s), their
 *    connections close at once, then 5,000 more arrive at once and are abandoned at once. The
 *    server's worst event-loop stall (goal < 50 ms), first bytes against the configured 2 s
 *    (goal within 10 %), errors, server RSS; three rounds, a fresh server each, and their median.
 * 4. Memory: 5,000 requests in flight for 2 s each, the live driver + engine against the fake
 *    upstream (goal: no errors, client + server peak RSS < 400 MB).
 *
 * Client CPU time per request is reported beside requests/s: on a shared machine it moves far
 * less than throughput does. Stalls are given in wall time and in CPU time (the CPU the server
 * spent between two ticks of a 5 ms probe: the stall it would have on a core of its own), beside
 * the longest garbage collection pause (a stall the collector made, not the server's own work).
 */
export async function liveSuite(): Promise<Row[]> {
  await compileLiveChildren();
  // 1. Clients against one fake upstream, interleaved.
  const CLIENTS = ['autocannon', 'driver', 'driver-engine', 'bare', 'dispatch'] as const;
  const clients = Object.fromEntries(CLIENTS.map((m) => [m, [] as Load[]])) as Record<(typeof CLIENTS)[number], Load[]>;
  const target = await server('fake');
  for (let i = 0; i < ROUNDS; i++) for (const mode of CLIENTS) clients[mode].push(load(mode, target.url));
  await target.stop();
  // 2. Servers, interleaved: fake, minimal, fake, minimal, ...
  const servers: Record<'fake' | 'minimal', Load[]> = { fake: [], minimal: [] };
  const serverCpu: Record<'fake' | 'minimal', number[]> = { fake: [], minimal: [] };
  for (let i = 0; i < ROUNDS; i++) {
    for (const kind of ['fake', 'minimal'] as const) {
      const s = await server(kind);
      servers[kind].push(load('autocannon', s.url));
      serverCpu[kind].push((await s.stop()).cpuUsPerRequest);
    }
  }
  // 3. Streams: bursts of 5,000 at once, a few rounds, each against a server of its own.
  const streamRuns: Array<{ load: Load; server: ServerFigures; overflows: number }> = [];
  for (let i = 0; i < STREAM_ROUNDS; i++) {
    const s = await server('fake', STREAM_TTFT_MS);
    const before = listenOverflows();
    const l = load('held', s.url, STREAMS, STREAM_WAVE_SECONDS, STREAMS);
    const overflows = before < 0 ? -1 : listenOverflows() - before;
    streamRuns.push({ load: l, server: await s.stop(), overflows });
  }
  // 4. Memory: 5,000 requests held 2 s each, two waves of them.
  const heldFake = await server('fake', HELD_MS);
  const held = load('driver-engine', heldFake.url, HELD, HELD_SECONDS, HELD);
  const heldServer = await heldFake.stop();

  const rps = (runs: Load[]): number => median(runs.map((r) => r.rps));
  const cpu = (runs: Load[]): number => median(runs.map((r) => r.cpuUsPerRequest));
  const p99 = (runs: Load[]): number => median(runs.map((r) => r.p99Ms));
  const base = clients.autocannon;
  const [acRps, acCpu, acP99] = [rps(base), cpu(base), p99(base)];
  const clientRow = (run: string, mode: (typeof CLIENTS)[number], goal: string) => {
    const runs = clients[mode];
    return {
      run,
      'requests/s': rps(runs),
      'vs autocannon': mode === 'autocannon' ? 'baseline' : pct(ratio(rps(runs), acRps)),
      'p99 ms': mode === 'bare' || mode === 'dispatch' ? '—' : p99(runs),
      'Δp99 ms': mode === 'autocannon' ? 'baseline' : mode === 'bare' || mode === 'dispatch' ? '—' : p99(runs) - acP99,
      'client CPU µs/req': cpu(runs),
      'CPU vs autocannon': mode === 'autocannon' ? 'baseline' : pct(ratio(acCpu, cpu(runs))),
      goal,
    };
  };
  printTable(
    `live: clients against one stormlab serve (zero-latency model; ${IN_FLIGHT} in flight on ${IN_FLIGHT} connections), ${SECONDS} s per run, median of ${ROUNDS} interleaved`,
    [
      clientRow('autocannon', 'autocannon', ''),
      clientRow('live driver, no engine', 'driver', '>= 95 %, p99 +5 ms'),
      clientRow('live driver, engine on', 'driver-engine', '>= 85 %'),
      clientRow('undici pool.request loop', 'bare', ''),
      clientRow('undici Pool.dispatch loop', 'dispatch', ''),
    ],
  );
  console.log(
    '("CPU vs autocannon": its CPU per request ÷ this one, the throughput it could reach with a core to itself; steadier than requests/s on a busy machine. The driver\'s p99 counts from each request\'s intended start.)',
  );
  const [fake, min] = [rps(servers.fake), rps(servers.minimal)];
  const [fakeCpu, minCpu] = [median(serverCpu.fake), median(serverCpu.minimal)];
  printTable(
    `live: servers, loaded by autocannon (${IN_FLIGHT} connections), ${SECONDS} s per run, median of ${ROUNDS} interleaved`,
    [
      {
        run: 'fake upstream',
        'requests/s': fake,
        'vs minimal': pct(ratio(fake, min)),
        'server CPU µs/req': fakeCpu,
        'CPU vs minimal': pct(ratio(minCpu, fakeCpu)),
        goal: '>= 90 %',
      },
      {
        run: 'minimal node:http',
        'requests/s': min,
        'vs minimal': 'baseline',
        'server CPU µs/req': minCpu,
        'CPU vs minimal': 'baseline',
        goal: '',
      },
    ],
  );
  const ttftOff = (ms: number): number => ms / STREAM_TTFT_MS - 1;
  const streamRow = (run: string, l: Load, f: ServerFigures, overflows: number, goal: string) => ({
    run,
    'held at once': f.maxInFlight,
    errors: l.failed,
    'server MB': f.peakRssMb,
    'worst stall ms': f.maxStallMs,
    'of it core wait ms': f.maxStallWaitMs,
    'stall CPU ms': f.maxStallCpuMs,
    'worst GC ms': f.maxGcMs,
    'first byte p50': l.p50Ms ?? 0,
    'first byte p99': l.p99Ms,
    'p99 vs ttft': pct(ttftOff(l.p99Ms)),
    'from write p50': l.writtenP50Ms ?? 0,
    'from write p99': l.writtenP99Ms ?? 0,
    'vs ttft': pct(ttftOff(l.writtenP99Ms ?? 0)),
    'listen drops': overflows < 0 ? '—' : overflows,
    goal,
  });
  /** The median of the rounds, figure by figure (the most held and the errors: the worst). */
  const mid = (pick: (r: (typeof streamRuns)[number]) => number): number => median(streamRuns.map(pick));
  const worst = (pick: (r: (typeof streamRuns)[number]) => number): number => Math.max(...streamRuns.map(pick));
  const streams: Load = {
    mode: 'held',
    rps: 0,
    counted: mid((r) => r.load.counted),
    failed: worst((r) => r.load.failed),
    cpuUsPerRequest: mid((r) => r.load.cpuUsPerRequest),
    p99Ms: mid((r) => r.load.p99Ms),
    p50Ms: mid((r) => r.load.p50Ms ?? 0),
    writtenP50Ms: mid((r) => r.load.writtenP50Ms ?? 0),
    writtenP99Ms: mid((r) => r.load.writtenP99Ms ?? 0),
    peakRssMb: mid((r) => r.load.peakRssMb),
  };
  const streamsFigures: ServerFigures = {
    peakRssMb: worst((r) => r.server.peakRssMb),
    maxInFlight: Math.min(...streamRuns.map((r) => r.server.maxInFlight)),
    served: mid((r) => r.server.served),
    cpuUsPerRequest: mid((r) => r.server.cpuUsPerRequest),
    maxStallMs: mid((r) => r.server.maxStallMs),
    maxStallCpuMs: mid((r) => r.server.maxStallCpuMs),
    maxStallWaitMs: mid((r) => r.server.maxStallWaitMs),
    maxGcMs: mid((r) => r.server.maxGcMs),
  };
  const overflows = streamRuns.some((r) => r.overflows < 0) ? -1 : worst((r) => r.overflows);
  printTable(
    `live: ${STREAMS.toLocaleString('en-US')} streams arriving at once (first token at ${STREAM_TTFT_MS / 1000} s), closing at once, then ${STREAMS.toLocaleString('en-US')} more abandoned at once; ${STREAM_ROUNDS} rounds, a server each`,
    [
      ...streamRuns.map((r, i) => streamRow(`round ${i + 1}`, r.load, r.server, r.overflows, '')),
      streamRow(
        'median (RSS, errors: worst)',
        streams,
        streamsFigures,
        overflows,
        'stall < 50 ms, p99 within 10 %, 0 errors',
      ),
    ],
  );
  console.log(
    `(First bytes from the wave's start include the load child's own time to open ${STREAMS.toLocaleString('en-US')} connections; "from write" counts from the moment each request went out, the server's part.)`,
  );
  if (overflows > 0)
    console.log(
      `(${overflows} connections found the listen queue full and were retried a second or more later: first bytes that late are the kernel's doing, not the server's.)`,
    );
  printTable(
    `live: ${HELD.toLocaleString('en-US')} requests in flight at once, ${HELD_MS / 1000} s each, ${HELD_SECONDS + 1} s of load`,
    [
      {
        run: 'live driver + engine → fake upstream',
        'held at once': heldServer.maxInFlight,
        'client MB': held.peakRssMb,
        'server MB': heldServer.peakRssMb,
        'total MB': held.peakRssMb + heldServer.peakRssMb,
        'not 200': held.failed,
        'worst stall ms': heldServer.maxStallMs,
        goal: '< 400 MB, 0 errors',
      },
    ],
  );
  const row = (name: string, value: number, unit: string): Row => ({
    suite: 'live',
    name,
    value: Number(value.toFixed(3)),
    unit,
  });
  const [drv, eng] = [rps(clients.driver), rps(clients['driver-engine'])];
  const drvRatios = clients.driver.map((d, i) => ratio(d.rps, base[i].rps));
  console.log(
    `live driver: ${pct(ratio(drv, acRps))} of autocannon's requests/s (median of ${ROUNDS} alternated; rounds ${drvRatios.map(pct).join(', ')}; goal >= 95 %: ${ratio(drv, acRps) >= 0.95 ? 'met' : 'NOT met'}), p99 ${(p99(clients.driver) - acP99).toFixed(1)} ms beside autocannon's (goal within 5 ms: ${p99(clients.driver) - acP99 <= 5 ? 'met' : 'NOT met'})`,
  );
  return [
    row('live-autocannon-rps', acRps, 'requests/s'),
    row('live-driver-rps', drv, 'requests/s'),
    row('live-driver-engine-rps', eng, 'requests/s'),
    row('live-undici-request-rps', rps(clients.bare), 'requests/s'),
    row('live-undici-dispatch-rps', rps(clients.dispatch), 'requests/s'),
    row('live-driver-vs-autocannon', ratio(drv, acRps), 'ratio'),
    row('live-driver-engine-vs-autocannon', ratio(eng, acRps), 'ratio'),
    row('live-autocannon-p99-ms', acP99, 'ms'),
    row('live-driver-p99-ms', p99(clients.driver), 'ms'),
    row('live-driver-engine-p99-ms', p99(clients['driver-engine']), 'ms'),
    row('live-driver-p99-minus-autocannon-ms', p99(clients.driver) - acP99, 'ms'),
    row('live-autocannon-cpu-us-per-request', acCpu, 'µs'),
    row('live-driver-cpu-us-per-request', cpu(clients.driver), 'µs'),
    row('live-driver-engine-cpu-us-per-request', cpu(clients['driver-engine']), 'µs'),
    row('live-undici-request-cpu-us-per-request', cpu(clients.bare), 'µs'),
    row('live-undici-dispatch-cpu-us-per-request', cpu(clients.dispatch), 'µs'),
    row('live-driver-vs-autocannon-cpu', ratio(acCpu, cpu(clients.driver)), 'ratio'),
    row('live-fake-upstream-rps', fake, 'requests/s'),
    row('live-minimal-server-rps', min, 'requests/s'),
    row('live-fake-vs-minimal', ratio(fake, min), 'ratio'),
    row('live-fake-upstream-cpu-us-per-request', fakeCpu, 'µs'),
    row('live-minimal-server-cpu-us-per-request', minCpu, 'µs'),
    row('live-fake-vs-minimal-cpu', ratio(minCpu, fakeCpu), 'ratio'),
    row('live-streams-held', streamsFigures.maxInFlight, 'requests'),
    row('live-streams-errors', streams.failed, 'requests'),
    row('live-streams-server-rss-mb', streamsFigures.peakRssMb, 'MB'),
    row('live-streams-worst-stall-ms', streamsFigures.maxStallMs, 'ms'),
    row('live-streams-worst-stall-cpu-ms', streamsFigures.maxStallCpuMs, 'ms'),
    row('live-streams-worst-stall-core-wait-ms', streamsFigures.maxStallWaitMs, 'ms'),
    row(
      'live-streams-worst-stall-max-of-rounds-ms',
      worst((r) => r.server.maxStallMs),
      'ms',
    ),
    row(
      'live-streams-worst-stall-cpu-max-of-rounds-ms',
      worst((r) => r.server.maxStallCpuMs),
      'ms',
    ),
    row(
      'live-streams-from-write-p99-max-of-rounds-ms',
      worst((r) => r.load.writtenP99Ms ?? 0),
      'ms',
    ),
    row('live-streams-worst-gc-ms', streamsFigures.maxGcMs, 'ms'),
    row('live-streams-first-byte-p50-ms', streams.p50Ms ?? 0, 'ms'),
    row('live-streams-first-byte-p99-ms', streams.p99Ms, 'ms'),
    row('live-streams-first-byte-from-write-p50-ms', streams.writtenP50Ms ?? 0, 'ms'),
    row('live-streams-first-byte-from-write-p99-ms', streams.writtenP99Ms ?? 0, 'ms'),
    row('live-streams-listen-overflows', overflows, 'connections'),
    row('live-held-in-flight', heldServer.maxInFlight, 'requests'),
    row('live-held-client-rss-mb', held.peakRssMb, 'MB'),
    row('live-held-server-rss-mb', heldServer.peakRssMb, 'MB'),
    row('live-held-total-rss-mb', held.peakRssMb + heldServer.peakRssMb, 'MB'),
    row('live-held-failed', held.failed, 'requests'),
  ];
}
