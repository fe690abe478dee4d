import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { median, printTable, type Row } from './measure.js';
import { simpyPeerRows } from './simpy-peer.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = fileURLToPath(new URL('../bin/stormlab.js', import.meta.url));
const SIM_CHILD = fileURLToPath(new URL('./sim-time-child.mjs', import.meta.url));

/**
 * The bundled retry-storm at ten times its rate for ten times as long: 200 root tasks/s for
 * 600 s, 100× its root tasks (120,000; 9.6 M upstream attempts).
 */
export const BIG = ['--set', 'arrival.rate=200', '--duration', '600s'];

/** Wall ms of one whole process (spawn to exit), failing loudly on a non-zero exit. */
export function processMs(args: string[]): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 24 });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`bench: node ${args.join(' ')} exited ${r.status ?? r.signal}: ${r.stderr}`);
  return ms;
}

/** Median wall ms of `runs` whole processes (after one unmeasured run, for the disk cache). */
export function medianProcessMs(args: string[], runs: number): number {
  processMs(args);
  return median(Array.from({ length: runs }, () => processMs(args)));
}

function simMs(scenario: string, set: string[]): number {
  const r = spawnSync(process.execPath, [SIM_CHILD, scenario, ...set], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`bench: sim-time-child failed: ${r.stderr}`);
  return (JSON.parse(r.stdout.trim()) as { simMs: number }).simMs;
}

/**
 * `npm run bench -- --suite cli`: the CLI as a user meets it, whole processes from spawn to
 * exit (the built `bin/stormlab.js`, so `npm run build` first): start-up against `node -e ''`,
 * and the bundled retry-storm at its size and at ten times it, told apart into the simulation
 * (timed in-process) and everything else.
 */
export async function cliSuite(): Promise<Row[]> {
  if (!existsSync(fileURLToPath(new URL('../dist/cli/main.js', import.meta.url))))
    throw new Error('bench cli: dist/ is missing: npm run build first');
  const floor = medianProcessMs(['-e', ''], 10);
  const version = medianProcessMs([BIN, '--version'], 10);
  const scenarios = medianProcessMs([BIN, 'scenarios'], 10);
  const bundled = medianProcessMs([BIN, 'run', 'retry-storm', '--quiet'], 5);
  const bundledSim = median(Array.from({ length: 3 }, () => simMs('retry-storm', [])));
  const big = medianProcessMs([BIN, 'run', 'retry-storm', '--quiet', ...BIG], 2);
  const bigSim = median(Array.from({ length: 2 }, () => simMs('retry-storm', ['arrival.rate=200', 'duration=600s'])));
  printTable('cli: whole processes, spawn to exit (median)', [
    { process: "node -e ''", 'wall ms': floor, 'over node ms': 0 },
    { process: 'stormlab --version', 'wall ms': version, 'over node ms': version - floor },
    { process: 'stormlab scenarios', 'wall ms': scenarios, 'over node ms': scenarios - floor },
    { process: 'stormlab run retry-storm -q', 'wall ms': bundled, 'over node ms': bundled - floor },
    { process: '  of which the simulation', 'wall ms': bundledSim, 'over node ms': 0 },
    { process: 'stormlab run retry-storm -q, 200/s for 600 s (100×)', 'wall ms': big, 'over node ms': big - floor },
    { process: '  of which the simulation', 'wall ms': bigSim, 'over node ms': 0 },
  ]);
  const startup = bundled - bundledSim;
  console.log(
    `run retry-storm: ${startup.toFixed(0)} ms of the process is not the simulation (goal < 300 ms), ${(bundled - bundledSim - floor).toFixed(0)} ms beyond node's own start`,
  );
  const row = (name: string, value: number, unit = 'ms'): Row => ({
    suite: 'cli',
    name,
    value: Number(value.toFixed(1)),
    unit,
  });
  return [
    row('cli-node-floor-ms', floor),
    row('cli-version-ms', version),
    row('cli-scenarios-ms', scenarios),
    row('cli-startup-over-node-ms', version - floor),
    row('cli-run-retry-storm-ms', bundled),
    row('cli-run-retry-storm-sim-ms', bundledSim),
    row('cli-run-retry-storm-startup-ms', startup),
    row('cli-run-retry-storm-100x-ms', big),
    row('cli-run-retry-storm-100x-sim-ms', bigSim),
    ...simpyPeerRows(),
  ];
}
