// Times one simulation of a scenario inside a warm-enough process (modules loaded first), so the
// CLI bench can tell the whole process's time into start-up and simulation. Prints JSON.
import { simulatePoint } from '../dist/explore/simulate-point.js';

const [scenario, ...set] = process.argv.slice(2);
const t0 = performance.now();
simulatePoint({ scenario, cwd: process.cwd(), set }, []);
console.log(JSON.stringify({ simMs: performance.now() - t0 }));
