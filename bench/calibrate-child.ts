import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { derive } from '../src/calibrate/derive.js';
import { observe } from '../src/calibrate/calibrate.js';
import { fixtureLines, type Truth } from '../test/calibrate/otlp-fixture.js';

/**
 * One calibration in a process of its own, so its peak RSS is calibrate's:
 *
 *   node --import tsx bench/calibrate-child.ts <roots>
 *
 * writes the synthetic multi-agent traces of test/calibrate/otlp-fixture.ts (about 20 spans a
 * root task, 30 % of attempts answered 429 in one window) as JSON Lines to a temp file, then
 * times reading and fitting it (`observe` + `derive`: what is per span; the fit report's
 * simulation is per root task and not timed here). Prints one JSON line.
 */
const roots = Number(process.argv[2] ?? 50_000);
const dir = mkdtempSync(join(tmpdir(), 'stormlab-calibrate-bench-'));
const file = join(dir, 'traces.jsonl');
const truth: Truth = { roots: 0, agentCalls: 0, modelCalls: 0, attempts: 0, toolCalls: 0 };
const fd = openSync(file, 'w');
for (const line of fixtureLines({ roots, rate: 20, failRate: 0.3, failFrom: 60_000, failTo: 120_000 }, truth))
  writeSync(fd, `${line}\n`);
closeSync(fd);
const bytes = statSync(file).size;
const rssBeforeKb = process.resourceUsage().maxRSS;
const cpu0 = process.cpuUsage();
const t0 = process.hrtime.bigint();
const obs = observe([{ path: file, label: 'traces.jsonl' }]);
derive(obs, 'bench');
const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
const cpu = process.cpuUsage(cpu0);
rmSync(dir, { recursive: true, force: true });
process.stdout.write(
  `${JSON.stringify({
    roots,
    spans: obs.spans,
    bytes,
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    peakOpenTraces: obs.peakOpenTraces,
    rssBeforeMb: rssBeforeKb / 1024,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
  })}\n`,
);
