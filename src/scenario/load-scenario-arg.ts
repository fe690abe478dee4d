import { resolve } from 'node:path';
import { BUNDLED_DIR, resolveScenarioPath } from './bundled.js';
import { loadScenario } from './load-scenario.js';
import { ScenarioError } from './scenario-error.js';
import type { Scenario } from './scenario.js';

/**
 * The scenario a command line names — a file path (relative to `cwd`) or a bundled scenario's
 * name — with `set` applied. Every command and every sweep or tune point (in a worker thread
 * too) loads through here, so they find the same file. Messages, and variants resolved later,
 * name the scenario as the user wrote it, not its absolute path.
 */
export function loadScenarioArg(arg: string, set: readonly string[], cwd: string): Scenario {
  const path = arg.includes('/') || arg.includes('.') ? resolve(cwd, arg) : arg;
  try {
    return { ...loadScenario(resolveScenarioPath(path, BUNDLED_DIR), { set: [...set] }), source: arg };
  } catch (e) {
    if (e instanceof ScenarioError && e.source !== arg) throw new ScenarioError(arg, e.problems);
    throw e;
  }
}
