import { resultJson } from '../../report/result-json.js';
import { summaryTable } from '../../report/summary-table.js';
import type { ResultFile } from '../../run/metrics/result.js';
import { EXIT, type Io } from '../io.js';
import { pickVariants, scenarioFromFlags, type ScenarioFlags } from '../scenario-args.js';
import { simulateAll } from './run-variants.js';

export interface RunFlags extends ScenarioFlags {
  json?: string;
  quiet?: boolean;
  variant?: string;
  variants?: string;
}

/** Writes what a finished run or compare shows: the summary (or headline) and the JSON file. */
export function report(io: Io, file: ResultFile, flags: RunFlags): number {
  const table = summaryTable(file, { color: io.isTTY && io.env.NO_COLOR === undefined, width: 80 });
  io.stdout(flags.quiet ? `${table.split('\n')[0]}\n` : `${table.trimEnd()}\n`);
  if (flags.json !== undefined) {
    io.writeFile(flags.json, resultJson(file));
    if (!flags.quiet) io.stdout(`wrote ${flags.json}\n`);
  }
  return EXIT.ok;
}

/** `stormlab run <scenario>`: one run of the scenario as written (or of one variant). */
export function runCommand(io: Io, arg: string, flags: RunFlags): ResultFile {
  const scenario = scenarioFromFlags(arg, flags, io.cwd);
  const runs = flags.variant === undefined ? [{ name: scenario.name, scenario }] : pickVariants(scenario, flags.variant);
  return simulateAll(io, scenario.name, scenario.seed, runs);
}

/** `stormlab compare <scenario>`: the same scenario and seed under each policy variant. */
export function compareCommand(io: Io, arg: string, flags: RunFlags): ResultFile {
  const scenario = scenarioFromFlags(arg, flags, io.cwd);
  return simulateAll(io, scenario.name, scenario.seed, pickVariants(scenario, flags.variants));
}
