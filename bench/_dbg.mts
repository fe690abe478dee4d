import { loadScenario } from '../src/scenario/load-scenario.js';
import { resolveVariant } from '../src/scenario/variants.js';
import { Simulation } from '../src/run/sim/simulation.js';
const s = resolveVariant(loadScenario(process.argv[2]), process.argv[3]);
const sim = new Simulation({ name: 'x', seed: s.seed, durationMs: s.durationMs, drainMs: s.drainMs, traffic: s.traffic, upstream: s.upstream });
for (let l = 0; l < 3; l++) sim.traffic.guardOf(l)?.subscribe((e) => { if (e.type !== 'attempt' && e.type !== 'retry' && e.at < 8000) console.log(l, JSON.stringify(e)); });
for (const t of [1000, 2000, 3000, 4000, 6000, 8000]) {
  sim.advanceTo(t);
  const sn = sim.snapshot();
  console.log('t', t, 'amp', sn.amplification, JSON.stringify(sn.layers?.map((x: any) => [x.name, x.attempts, x.ok ?? '', x.failed ?? ''])));
}
