import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { median, printTable, type Row } from './measure.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVER = fileURLToPath(new URL('./live-server-child.ts', import.meta.url));
const LOAD = fileURLToPath(new URL('./live-load-child.ts', import.meta.url));

/** Requests kept in flight and pool connections for the throughput runs. */
const IN_FLIGHT = 128;
const SECONDS = 5;
const ROUNDS = 3;
/** The memory run: this many 2-second requests in flight at once, one connection each. */
const HELD = 5_000;
const HELD_MS = 2_000;

interface Load {
  mode: string;
  rps: number;
  counted: number;
  failed: number;
  peakRssMb: number;
}

/** A server child, listening; `stop()` ends it and gives its peak RSS. */
async function server(kind: 'fake' | 'minimal', ttftMs = 0): Promise<{ url: string; stop(): Promise<number> }> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', SERVER, kind, String(ttftMs)], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.done) throw new Error(`live bench: the ${kind} server did not start`);
  const { url } = JSON.parse(first.value) as { url: string };
  return {
    url,
    async stop() {
      child.stdin!.end();
      const last = await lines.next();
      return last.done ? NaN : (JSON.parse(last.value) as { peakRssMb: number }).peakRssMb;
    },
  };
}

/** One load run in a child process (blocking: the server runs in its own). */
function load(mode: 'bare' | 'driver' | 'driver-engine', url: string, inFlight = IN_FLIGHT, seconds = SECONDS, connections = IN_FLIGHT): Load {
  const r = spawnSync(process.execPath, ['--import', 'tsx', LOAD, mode, url, String(inFlight), String(seconds), String(connections)], { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 20 });
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
 *    server for reference.
 */
export async function liveSuite(): Promise<Row[]> {
  const fakeRps: number[] = [];
  const minimalRps: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    for (const kind of ['fake', 'minimal'] as const) {
      const s = await server(kind);
      const r = load('bare', s.url);
      await s.stop();
      (kind === 'fake' ? fakeRps : minimalRps).push(r.rps);
    }
  }
  const bareRps: number[] = [];
  const driverRps: number[] = [];
  const engineRps: number[] = [];
  const minimal = await server('minimal');
  for (let i = 0; i < ROUNDS; i++) {
    bareRps.push(load('bare', minimal.url).rps);
    driverRps.push(load('driver', minimal.url).rps);
    engineRps.push(load('driver-engine', minimal.url).rps);
  }
  await minimal.stop();

  const heldFake = await server('fake', HELD_MS);
  const held = load('driver-engine', heldFake.url, HELD, 4, HELD);
  const heldServerMb = await heldFake.stop();
  const heldMinimal = await server('minimal', HELD_MS);
  const heldBare = load('bare', heldMinimal.url, HELD, 4, HELD);
  const heldMinimalMb = await heldMinimal.stop();

  const [fake, min, bare, drv, eng] = [fakeRps, minimalRps, bareRps, driverRps, engineRps].map(median);
  printTable(`live: requests/s on loopback, ${IN_FLIGHT} in flight, ${SECONDS} s per run, median of ${ROUNDS}`, [
    { run: 'fake upstream (bare undici loop)', 'requests/s': fake, 'vs baseline': pct(ratio(fake, min)), goal: '>= 70 %' },
    { run: 'minimal node:http (bare undici loop)', 'requests/s': min, 'vs baseline': 'baseline', goal: '' },
    { run: 'live driver, no engine (minimal server)', 'requests/s': drv, 'vs baseline': pct(ratio(drv, bare)), goal: '' },
    { run: 'live driver, engine on (minimal server)', 'requests/s': eng, 'vs baseline': pct(ratio(eng, bare)), goal: '>= 85 %' },
    { run: 'bare undici loop (minimal server)', 'requests/s': bare, 'vs baseline': 'baseline', goal: '' },
  ]);
  printTable(`live: ${HELD.toLocaleString('en-US')} requests in flight, ${HELD_MS / 1000} s each`, [
    { run: 'live driver + engine → fake upstream', 'client MB': held.peakRssMb, 'server MB': heldServerMb, 'total MB': held.peakRssMb + heldServerMb, 'not 200': held.failed, goal: '< 400 MB, 0 errors' },
    { run: 'bare undici loop → minimal node:http', 'client MB': heldBare.peakRssMb, 'server MB': heldMinimalMb, 'total MB': heldBare.peakRssMb + heldMinimalMb, 'not 200': heldBare.failed, goal: '' },
  ]);
  const row = (name: string, value: number, unit: string): Row => ({ suite: 'live', name, value: Number(value.toFixed(3)), unit });
  return [
    row('live-fake-upstream-rps', fake, 'requests/s'),
    row('live-minimal-server-rps', min, 'requests/s'),
    row('live-fake-vs-minimal', ratio(fake, min), 'ratio'),
    row('live-bare-undici-rps', bare, 'requests/s'),
    row('live-driver-rps', drv, 'requests/s'),
    row('live-driver-engine-rps', eng, 'requests/s'),
    row('live-driver-vs-bare', ratio(drv, bare), 'ratio'),
    row('live-driver-engine-vs-bare', ratio(eng, bare), 'ratio'),
    row('live-held-client-rss-mb', held.peakRssMb, 'MB'),
    row('live-held-server-rss-mb', heldServerMb, 'MB'),
    row('live-held-total-rss-mb', held.peakRssMb + heldServerMb, 'MB'),
    row('live-held-failed', held.failed, 'requests'),
    row('live-held-bare-client-rss-mb', heldBare.peakRssMb, 'MB'),
    row('live-held-minimal-server-rss-mb', heldMinimalMb, 'MB'),
  ];
}
