import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { median, printTable, type Row } from './measure.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVER = fileURLToPath(new URL('./live-server-child.ts', import.meta.url));
const LOAD = fileURLToPath(new URL('./live-load-child.ts', import.meta.url));

/** Requests kept in flight and pool connections for the throughput runs. */
const IN_FLIGHT = 256;
const SECONDS = 5;
const ROUNDS = 3;
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
  peakRssMb: number;
}

/**
 * The children compiled to plain JavaScript (esbuild, which tsx brings along), so that they
 * run as `stormlab` runs from dist/: without tsx's loader, which costs every process some
 * 35 MB of RSS and a worker thread. Dependencies stay in node_modules (the output sits under
 * it, so they resolve).
 */
const CHILDREN = { server: '', load: '' };

async function compileChildren(): Promise<void> {
  const { build } = await import('esbuild');
  const outdir = join(ROOT, 'node_modules', '.cache', 'stormlab-bench');
  await build({
    entryPoints: { 'live-server-child': SERVER, 'live-load-child': LOAD },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outdir,
    outExtension: { '.js': '.mjs' },
    logLevel: 'warning',
  });
  CHILDREN.server = join(outdir, 'live-server-child.mjs');
  CHILDREN.load = join(outdir, 'live-load-child.mjs');
}

interface ServerFigures {
  peakRssMb: number;
  maxInFlight: number;
  served: number;
  cpuUsPerRequest: number;
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

/** One load run in a child process (blocking: the server runs in its own). */
function load(
  mode: 'bare' | 'driver' | 'driver-engine',
  url: string,
  inFlight = IN_FLIGHT,
  seconds = SECONDS,
  connections = IN_FLIGHT,
): Load {
  const r = spawnSync(
    process.execPath,
    [CHILDREN.load, mode, url, String(inFlight), String(seconds), String(connections)],
    { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 20 },
  );
  if (r.status !== 0) throw new Error(`live bench load (${mode}) failed with ${r.status ?? r.signal}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Load;
}

const ratio = (a: number, b: number): number => (b > 0 ? a / b : 0);
const pct = (x: number): string => `${(x * 100).toFixed(0)} %`;

/**
 * The live suite. Each figure is compared with its baseline in the same run, rounds
 * interleaved (A, B, A, B, …) so a busy machine slows both alike; the median round counts.
 *
 * 1. Servers: the fake upstream vs a minimal `node:http` server answering the same JSON, both
 *    loaded by the same bare undici loop (goal: fake ≥ 70 % of minimal).
 * 2. Clients: the live driver (without and with the engine) vs the bare undici loop, both
 *    against the minimal server (goal: driver with the engine ≥ 85 % of bare).
 * 3. Memory: 5,000 requests in flight for 2 s each, the live driver against the fake upstream
 *    (goal: no errors, client + server peak RSS < 400 MB); the bare loop against the minimal
 *    server for reference. The server counts the most requests it held at once.
 *
 * Client CPU time per request is reported beside requests/s: on a shared machine it moves
 * far less than throughput does.
 */
export async function liveSuite(): Promise<Row[]> {
  await compileChildren();
  // 1. Servers, interleaved: fake, minimal, fake, minimal, ...
  const servers: Record<'fake' | 'minimal', Load[]> = { fake: [], minimal: [] };
  const serverCpu: Record<'fake' | 'minimal', number[]> = { fake: [], minimal: [] };
  for (let i = 0; i < ROUNDS; i++) {
    for (const kind of ['fake', 'minimal'] as const) {
      const s = await server(kind);
      servers[kind].push(load('bare', s.url));
      serverCpu[kind].push((await s.stop()).cpuUsPerRequest);
    }
  }
  // 2. Clients against one minimal server, interleaved.
  const clients: Record<'bare' | 'driver' | 'driver-engine', Load[]> = { bare: [], driver: [], 'driver-engine': [] };
  const minimal = await server('minimal');
  for (let i = 0; i < ROUNDS; i++)
    for (const mode of ['bare', 'driver', 'driver-engine'] as const) clients[mode].push(load(mode, minimal.url));
  await minimal.stop();
  // 3. Memory: 5,000 requests held 2 s each, two waves of them.
  const heldFake = await server('fake', HELD_MS);
  const held = load('driver-engine', heldFake.url, HELD, HELD_SECONDS, HELD);
  const heldServer = await heldFake.stop();
  const heldMinimal = await server('minimal', HELD_MS);
  const heldBare = load('bare', heldMinimal.url, HELD, HELD_SECONDS, HELD);
  const heldMinimalServer = await heldMinimal.stop();

  const rps = (runs: Load[]): number => median(runs.map((r) => r.rps));
  const cpu = (runs: Load[]): number => median(runs.map((r) => r.cpuUsPerRequest));
  const [fake, min] = [rps(servers.fake), rps(servers.minimal)];
  const [bare, drv, eng] = [rps(clients.bare), rps(clients.driver), rps(clients['driver-engine'])];
  const [bareCpu, drvCpu, engCpu] = [cpu(clients.bare), cpu(clients.driver), cpu(clients['driver-engine'])];
  const [fakeCpu, minCpu] = [median(serverCpu.fake), median(serverCpu.minimal)];
  printTable(
    `live: servers, the same bare undici loop (${IN_FLIGHT} in flight on ${IN_FLIGHT} connections), ${SECONDS} s per run, median of ${ROUNDS} interleaved`,
    [
      {
        run: 'fake upstream',
        'requests/s': fake,
        'vs baseline': pct(ratio(fake, min)),
        'server CPU µs/req': fakeCpu,
        'CPU vs baseline': pct(ratio(minCpu, fakeCpu)),
        goal: '>= 70 %',
      },
      {
        run: 'minimal node:http',
        'requests/s': min,
        'vs baseline': 'baseline',
        'server CPU µs/req': minCpu,
        'CPU vs baseline': 'baseline',
        goal: '',
      },
    ],
  );
  printTable(
    `live: clients against the minimal server (${IN_FLIGHT} in flight on ${IN_FLIGHT} connections), ${SECONDS} s per run, median of ${ROUNDS} interleaved`,
    [
      {
        run: 'bare undici Pool loop',
        'requests/s': bare,
        'vs baseline': 'baseline',
        'client CPU µs/req': bareCpu,
        'CPU vs baseline': 'baseline',
        goal: '',
      },
      {
        run: 'live driver, no engine',
        'requests/s': drv,
        'vs baseline': pct(ratio(drv, bare)),
        'client CPU µs/req': drvCpu,
        'CPU vs baseline': pct(ratio(bareCpu, drvCpu)),
        goal: '',
      },
      {
        run: 'live driver, engine on',
        'requests/s': eng,
        'vs baseline': pct(ratio(eng, bare)),
        'client CPU µs/req': engCpu,
        'CPU vs baseline': pct(ratio(bareCpu, engCpu)),
        goal: '>= 85 %',
      },
    ],
  );
  console.log(
    '("CPU vs baseline": baseline CPU per request ÷ this one, the throughput it could reach with a core to itself; steadier than requests/s on a busy machine)',
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
        goal: '< 400 MB, 0 errors',
      },
      {
        run: 'bare undici loop → minimal node:http',
        'held at once': heldMinimalServer.maxInFlight,
        'client MB': heldBare.peakRssMb,
        'server MB': heldMinimalServer.peakRssMb,
        'total MB': heldBare.peakRssMb + heldMinimalServer.peakRssMb,
        'not 200': heldBare.failed,
        goal: '',
      },
    ],
  );
  const row = (name: string, value: number, unit: string): Row => ({
    suite: 'live',
    name,
    value: Number(value.toFixed(3)),
    unit,
  });
  return [
    row('live-fake-upstream-rps', fake, 'requests/s'),
    row('live-minimal-server-rps', min, 'requests/s'),
    row('live-fake-vs-minimal', ratio(fake, min), 'ratio'),
    row('live-bare-undici-rps', bare, 'requests/s'),
    row('live-driver-rps', drv, 'requests/s'),
    row('live-driver-engine-rps', eng, 'requests/s'),
    row('live-driver-vs-bare', ratio(drv, bare), 'ratio'),
    row('live-driver-engine-vs-bare', ratio(eng, bare), 'ratio'),
    row('live-fake-upstream-cpu-us-per-request', fakeCpu, 'µs'),
    row('live-minimal-server-cpu-us-per-request', minCpu, 'µs'),
    row('live-fake-vs-minimal-cpu', ratio(minCpu, fakeCpu), 'ratio'),
    row('live-bare-cpu-us-per-request', bareCpu, 'µs'),
    row('live-driver-cpu-us-per-request', drvCpu, 'µs'),
    row('live-driver-engine-cpu-us-per-request', engCpu, 'µs'),
    row('live-driver-engine-vs-bare-cpu', ratio(bareCpu, engCpu), 'ratio'),
    row('live-held-in-flight', heldServer.maxInFlight, 'requests'),
    row('live-held-client-rss-mb', held.peakRssMb, 'MB'),
    row('live-held-server-rss-mb', heldServer.peakRssMb, 'MB'),
    row('live-held-total-rss-mb', held.peakRssMb + heldServer.peakRssMb, 'MB'),
    row('live-held-failed', held.failed, 'requests'),
    row('live-held-bare-client-rss-mb', heldBare.peakRssMb, 'MB'),
    row('live-held-minimal-server-rss-mb', heldMinimalServer.peakRssMb, 'MB'),
  ];
}
