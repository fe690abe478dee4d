import { resolveScenario } from '../scenario/resolve-scenario.js';
import type { Scenario } from '../scenario/scenario.js';
import { scenarioSets, type ScenarioFlags } from './scenario-args.js';

/** The scenario a command names, as written, with --set, --duration and --seed applied (resolved in full, synchronously). */
export function scenarioFromFlags(arg: string, flags: ScenarioFlags, cwd: string): Scenario {
  return resolveScenario({ arg, cwd, set: scenarioSets(flags), checkFile: true }).runs[0].scenario;
}
