import { resultJson } from '../../report/result-json.js';
import { summaryTable } from '../../report/summary-table.js';
import type { ResultFile } from '../../run/metrics/result.js';
import { EXIT, UsageError, type Io } from '../io.js';
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
    writeOutput(io, '--json', flags.json, resultJson(file));
    if (!flags.quiet) io.stdout(`wrote ${flags.json}\n`);
  }
  return EXIT.ok;
}

const WRITE_ERRORS: Record<string, string> = {
  ENOENT: 'its directory does not exist',
  ENOTDIR: 'a part of its path is not a directory',
  EISDIR: 'it is a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the file system is read-only',
};

/** Writes an output file; failing to is the user's to fix (exit 2), not an internal error. */
function writeOutput(io: Io, flag: string, path: string, data: string): void {
  try {
    io.writeFile(path, data);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? '';
    throw new UsageError(`${flag}: cannot write ${path}: ${WRITE_ERRORS[code] ?? (e as Error).message}`);
  }
}

/** `stormlab run <scenario>`: one run of the scenario as written (or of one variant). */
export function runCommand(io: Io, arg: string, flags: RunFlags): ResultFile {
  if (flags.variant !== undefined && (flags.variant.includes(',') || flags.variant.trim() === '')) {
    throw new UsageError(`--variant: expected one variant name (compare --variants a,b runs several), got ${JSON.stringify(flags.variant)}`);
  }
  const scenario = scenarioFromFlags(arg, flags, io.cwd);
  const runs = flags.variant === undefined ? [{ name: scenario.name, scenario }] : pickVariants(scenario, flags.variant, '--variant');
  return simulateAll(io, scenario.name, scenario.seed, runs);
}

/** `stormlab compare <scenario>`: the same scenario and seed under each policy variant. */
export function compareCommand(io: Io, arg: string, flags: RunFlags): ResultFile {
  const scenario = scenarioFromFlags(arg, flags, io.cwd);
  return simulateAll(io, scenario.name, scenario.seed, pickVariants(scenario, flags.variants));
}
