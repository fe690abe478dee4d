// Times one simulation of a scenario inside a warm-enough process (modules loaded and the
// scenario loaded first), so the CLI bench can tell the whole process's time into start-up and
// simulation: what is timed is what `run` spends in the simulator. Prints JSON.
import { resolveScenario } from '../dist/scenario/resolve-scenario.js';
import { runSpecOf } from '../dist/run/run-spec.js';
import { Simulation } from '../dist/run/sim/simulation.js';

const [scenario, ...rest] = process.argv.slice(2);
const set = rest.map((text) => ({ text, from: '--set' }));
const s = resolveScenario({ arg: scenario, cwd: process.cwd(), set }).runs[0].scenario;
const t0 = performance.now();
const sim = new Simulation(runSpecOf(s, s.name));
sim.advanceTo(Infinity);
sim.result();
console.log(JSON.stringify({ simMs: performance.now() - t0 }));
