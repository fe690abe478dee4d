import { closeSync, openSync, statSync, writeSync } from 'node:fs';
import { calibrate, observe } from '../src/calibrate/calibrate.js';
import { derive } from '../src/calibrate/derive.js';
import { fixtureLines, type Truth } from '../test/calibrate/otlp-fixture.js';

/**
 * One step of the calibrate bench in a process of its own, so a peak RSS is that step's alone:
 *
 *   node --import tsx bench/calibrate-child.ts write <roots> <file>
 *   node --import tsx bench/calibrate-child.ts read <file>
 *
 * `write` writes the synthetic multi-agent traces of test/calibrate/otlp-fixture.ts (about 20
 * spans a root task, 30 % of attempts answered 429 in one window) as JSON Lines. `read` times
 * reading and fitting them (`observe` + `derive`: the part that is per span), then the whole of
 * `calibrate` (the same again, plus the fit report's simulation, which is per root task). Each
 * prints one JSON line.
 */
const [mode, a, b] = process.argv.slice(2);
if (mode === 'write') {
  const truth: Truth = { roots: 0, agentCalls: 0, modelCalls: 0, attempts: 0, toolCalls: 0 };
  const fd = openSync(b, 'w');
  for (const line of fixtureLines(
    { roots: Number(a), rate: 20, failRate: 0.3, failFrom: 60_000, failTo: 120_000 },
    truth,
  ))
    writeSync(fd, `${line}\n`);
  closeSync(fd);
  process.stdout.write(`${JSON.stringify({ roots: truth.roots, bytes: statSync(b).size })}\n`);
} else {
  const file = a;
  const rssBeforeKb = process.resourceUsage().maxRSS;
  const cpu = (f: () => void) => {
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    f();
    const c = process.cpuUsage(c0);
    return { cpuMs: (c.user + c.system) / 1000, wallMs: Number(process.hrtime.bigint() - t0) / 1e6 };
  };
  let obs: ReturnType<typeof observe> | undefined;
  const fit = cpu(() => {
    obs = observe([{ path: file, label: 'traces.jsonl' }]);
    derive(obs, 'bench');
  });
  const rssFitKb = process.resourceUsage().maxRSS;
  const whole = cpu(() => void calibrate([{ path: file, label: 'traces.jsonl' }]));
  process.stdout.write(
    `${JSON.stringify({
      spans: obs!.spans,
      roots: obs!.roots,
      wallMs: fit.wallMs,
      cpuMs: fit.cpuMs,
      wholeCpuMs: whole.cpuMs,
      wholeWallMs: whole.wallMs,
      peakOpenTraces: obs!.peakOpenTraces,
      peakSpansHeld: obs!.peakSpansHeld,
      rssBeforeMb: rssBeforeKb / 1024,
      peakRssFitMb: rssFitKb / 1024,
      peakRssMb: process.resourceUsage().maxRSS / 1024,
    })}\n`,
  );
}
