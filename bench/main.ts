import { writeFileSync } from 'node:fs';
import { calibrateSuite } from './calibrate.bench.js';
import { cliSuite } from './cli.bench.js';
import { conformanceSuite } from './conformance.bench.js';
import { engineSuite } from './engine.bench.js';
import { exploreSuite } from './explore.bench.js';
import { fleetSuite } from './fleet.bench.js';
import { liveSuite } from './live.bench.js';
import type { Row } from './measure.js';
import { proxySuite } from './proxy.bench.js';
import { sharedSuite } from './shared.bench.js';
import { simSuite } from './sim.bench.js';
import { streamSuite } from './stream.bench.js';

/**
 * `npm run bench [-- --json FILE] [-- --suite engine|sim|live|shared|stream|cli|explore|conformance|calibrate|fleet|proxy]`: prints each suite's table and, with
 * --json, writes every figure as rows {suite, name, value, unit}.
 */
const SUITES: Record<string, () => Promise<Row[]>> = {
  engine: engineSuite,
  sim: simSuite,
  live: liveSuite,
  shared: sharedSuite,
  stream: streamSuite,
  cli: cliSuite,
  explore: exploreSuite,
  conformance: conformanceSuite,
  calibrate: calibrateSuite,
  fleet: fleetSuite,
  proxy: proxySuite,
};

function parseArgs(argv: string[]): { json?: string; suites: string[] } {
  const out: { json?: string; suites: string[] } = { suites: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--json') out.json = argv[++i];
    else if (a === '--suite') out.suites.push(argv[++i]);
    else {
      console.error(
        `bench: unknown argument ${JSON.stringify(a)} (use --json FILE, --suite ${Object.keys(SUITES).join('|')})`,
      );
      process.exit(2);
    }
  }
  for (const s of out.suites) {
    if (!(s in SUITES)) {
      console.error(`bench: unknown suite ${JSON.stringify(s)} (known: ${Object.keys(SUITES).join(', ')})`);
      process.exit(2);
    }
  }
  if (out.suites.length === 0) out.suites = Object.keys(SUITES);
  return out;
}

const args = parseArgs(process.argv.slice(2));
const rows: Row[] = [];
console.log(`node ${process.version}, ${new Date().toISOString()}`);
for (const s of args.suites) rows.push(...(await SUITES[s]()));
if (args.json) {
  writeFileSync(args.json, `${JSON.stringify(rows, null, 2)}\n`);
  console.log(`\nwrote ${rows.length} rows to ${args.json}`);
}
