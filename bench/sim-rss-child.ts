import { Simulation } from '../src/run/sim/simulation.js';
import { bundledSpec, scaledSpec } from './sim-scale.js';

/**
 * One retry-storm run in a process of its own, so its peak RSS is the simulator's and not the
 * benchmark parent's, and its JIT starts cold as a CLI run's does:
 *
 *   node --import tsx bench/sim-rss-child.ts <variant> [<rate> <durationMs>]
 *
 * (without rate and duration: the scenario as bundled). Prints one JSON line: the run's counts,
 * its wall and CPU time from building the Simulation to its result (module loading excluded;
 * CPU time is the steadier figure on a shared machine), and `process.resourceUsage().maxRSS`
 * before the run (Node, tsx, the scenario loader, the wasm histograms) and at its end.
 */
const [variant = 'naive', rate, durationMs] = process.argv.slice(2);

const spec = rate === undefined ? bundledSpec(variant) : scaledSpec(variant, Number(rate), Number(durationMs));
const rssBeforeKb = process.resourceUsage().maxRSS;
const cpu0 = process.cpuUsage();
const t0 = process.hrtime.bigint();
const sim = new Simulation(spec);
const result = sim.run();
const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
const cpu = process.cpuUsage(cpu0);
const events = sim.heap.fired;
const out = {
  variant,
  durationMs: spec.durationMs,
  wallMs,
  cpuMs: (cpu.user + cpu.system) / 1000,
  attempts: result.upstream.attempts,
  roots: result.roots.offered,
  events,
  amplification: result.amplification,
  rssBeforeMb: rssBeforeKb / 1024,
  peakRssMb: process.resourceUsage().maxRSS / 1024,
};
process.stdout.write(`${JSON.stringify(out)}\n`);
