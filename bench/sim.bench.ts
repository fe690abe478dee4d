import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { printTable, type Row } from './measure.js';
import { SIM_SCENARIO } from './sim-scale.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CHILD = fileURLToPath(new URL('./sim-rss-child.ts', import.meta.url));

/**
 * The naive run: retry-storm's full outage, 300 s of arrivals at 412 root tasks/s. Each root
 * task makes 27 leaf calls × 3 attempts = 81 upstream attempts, so 123,601 roots make
 * 10,011,681: the 10-million-attempt run.
 */
const NAIVE = { rate: 412, durationMs: 300_000 };
/**
 * The engine run: the same outage at 12,000 root tasks/s (3.6 M roots, about a second). The
 * engine sheds at the top layer once its breaker opens (~3 s in), so upstream attempts stay
 * in the tens: root tasks/s and events/s are its meaningful figures (each root is still a
 * logical call through a GuardCall, refused by the breaker).
 */
const ENGINE = { rate: 12_000, durationMs: 300_000 };
const NAIVE_RUNS = 2;
const ENGINE_RUNS = 3;

/** What `sim-rss-child.ts` prints, plus the child's whole life (spawn to exit). */
interface ChildRun {
  variant: string;
  wallMs: number;
  cpuMs: number;
  attempts: number;
  roots: number;
  events: number;
  amplification: number;
  rssBeforeMb: number;
  peakRssMb: number;
  processMs: number;
}

/** One run in a fresh process, so its peak RSS is its own and its JIT starts cold. */
function child(variant: string, scale?: { rate: number; durationMs: number }): ChildRun {
  const args = ['--import', 'tsx', CHILD, variant, ...(scale ? [String(scale.rate), String(scale.durationMs)] : [])];
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 20 });
  const processMs = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0)
    throw new Error(`sim bench child (${args.slice(2).join(' ')}) failed with ${r.status ?? r.signal}: ${r.stderr}`);
  return { ...(JSON.parse(r.stdout.trim().split('\n').pop()!) as Omit<ChildRun, 'processMs'>), processMs };
}

/** The run with the shortest wall time (the least disturbed by the rest of the machine). */
function fastest(runs: ChildRun[]): ChildRun {
  return runs.reduce((a, b) => (b.wallMs < a.wallMs ? b : a));
}

const perSec = (n: number, ms: number): number => (ms > 0 ? (n / ms) * 1000 : 0);

export async function simSuite(): Promise<Row[]> {
  const bundled = child('naive');
  const naiveRuns = Array.from({ length: NAIVE_RUNS }, () => child('naive', NAIVE));
  const engineRuns = Array.from({ length: ENGINE_RUNS }, () => child('engine', ENGINE));
  const naive = fastest(naiveRuns);
  const engine = fastest(engineRuns);
  const peakRss = Math.max(...naiveRuns.map((r) => r.peakRssMb));
  const baseRss = Math.min(...naiveRuns.map((r) => r.rssBeforeMb));

  const line = (name: string, r: ChildRun) => ({
    run: name,
    attempts: r.attempts,
    roots: r.roots,
    events: r.events,
    'wall ms': r.wallMs,
    'attempts/s': perSec(r.attempts, r.wallMs),
    'roots/s': perSec(r.roots, r.wallMs),
    'events/s': perSec(r.events, r.wallMs),
    'attempts/CPU-s': perSec(r.attempts, r.cpuMs),
    'peak RSS MB': r.peakRssMb,
  });
  printTable(`sim: ${SIM_SCENARIO}, one run per process (best of ${NAIVE_RUNS} naive, ${ENGINE_RUNS} engine)`, [
    line('naive, as bundled (60 s at 20/s, cold JIT)', bundled),
    line(`naive, ${NAIVE.durationMs / 1000} s at ${NAIVE.rate}/s`, naive),
    line(`engine, ${ENGINE.durationMs / 1000} s at ${ENGINE.rate}/s`, engine),
  ]);
  const naiveRate = perSec(naive.attempts, naive.wallMs);
  console.log(
    `naive: ${(naiveRate / 1e6).toFixed(2)} M upstream attempts/s (goal >= 1 M; ${(perSec(naive.attempts, naive.processMs) / 1e6).toFixed(2)} M counting process start-up), ` +
      `peak RSS ${peakRss.toFixed(0)} MB for ${(naive.attempts / 1e6).toFixed(1)} M attempts (goal < 200 MB; ${baseRss.toFixed(0)} MB before the run)`,
  );

  const row = (name: string, value: number, unit: string): Row => ({
    suite: 'sim',
    name,
    value: Number(value.toFixed(3)),
    unit,
  });
  return [
    row('sim-naive-attempts', naive.attempts, 'attempts'),
    row('sim-naive-attempts-per-sec', naiveRate, 'attempts/s'),
    row('sim-naive-attempts-per-cpu-sec', perSec(naive.attempts, naive.cpuMs), 'attempts/s'),
    row('sim-naive-attempts-per-sec-with-startup', perSec(naive.attempts, naive.processMs), 'attempts/s'),
    row('sim-naive-events-per-sec', perSec(naive.events, naive.wallMs), 'events/s'),
    row('sim-naive-wall-ms', naive.wallMs, 'ms'),
    row('sim-naive-peak-rss-mb', peakRss, 'MB'),
    row('sim-naive-base-rss-mb', baseRss, 'MB'),
    row('sim-naive-bundled-attempts-per-sec', perSec(bundled.attempts, bundled.wallMs), 'attempts/s'),
    row('sim-engine-attempts', engine.attempts, 'attempts'),
    row('sim-engine-roots', engine.roots, 'roots'),
    row('sim-engine-attempts-per-sec', perSec(engine.attempts, engine.wallMs), 'attempts/s'),
    row('sim-engine-roots-per-sec', perSec(engine.roots, engine.wallMs), 'roots/s'),
    row('sim-engine-events-per-sec', perSec(engine.events, engine.wallMs), 'events/s'),
    row('sim-engine-peak-rss-mb', Math.max(...engineRuns.map((r) => r.peakRssMb)), 'MB'),
  ];
}
