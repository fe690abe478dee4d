// Times one simulation of a scenario inside a warm-enough process (modules loaded and the
// scenario loaded first), so the CLI bench can tell the whole process's time into start-up and
// simulation: what is timed is what `run` spends in the simulator. Prints JSON.
import { loadScenarioArg } from '../dist/scenario/load-scenario-arg.js';
import { runSpecOf } from '../dist/run/run-spec.js';
import { Simulation } from '../dist/run/sim/simulation.js';

const [scenario, ...set] = process.argv.slice(2);
const s = loadScenarioArg(scenario, set, process.cwd());
const t0 = performance.now();
const sim = new Simulation(runSpecOf(s, s.name));
sim.advanceTo(Infinity);
sim.result();
console.log(JSON.stringify({ simMs: performance.now() - t0 }));
