import { resolve } from 'node:path';
import { calibrate } from '../../calibrate/calibrate.js';
import { FAULT_PRESETS, type FaultPreset } from '../../calibrate/fault-presets.js';
import { fitTable } from '../../calibrate/fit-report.js';
import { EXIT, UsageError, type Io } from '../io.js';
import { checkOutputs, STDOUT_PATH, writeOutput } from '../write-output.js';

export interface CalibrateFlags {
  output?: string;
  report?: string;
  faults?: string;
  name?: string;
  serveLog?: string[];
  quiet?: boolean;
}

/**
 * `stormlab calibrate <traces…> -o scenario.yaml`: reads OTLP JSON traces, writes the scenario
 * they describe and prints its fit. Every output is written only once everything succeeded,
 * so bad input leaves no file behind.
 */
export function calibrateCommand(io: Io, traces: string[], flags: CalibrateFlags): number {
  if (flags.output === undefined)
    throw new UsageError('calibrate: -o <file> is required (the scenario to write; - for stdout)');
  if (traces.length === 0) throw new UsageError('calibrate: name at least one trace file');
  if (flags.faults !== undefined && !(FAULT_PRESETS as readonly string[]).includes(flags.faults))
    throw new UsageError(`--faults: expected one of ${FAULT_PRESETS.join(', ')}, got ${JSON.stringify(flags.faults)}`);
  checkOutputs(io, [
    ['-o', flags.output],
    ['--report', flags.report],
  ]);
  const c = calibrate(
    traces.map((t) => ({ path: resolve(io.cwd, t), label: t })),
    {
      name: flags.name,
      faults: flags.faults as FaultPreset | undefined,
      serveLogs: (flags.serveLog ?? []).map((t) => ({ path: resolve(io.cwd, t), label: t })),
    },
  );
  for (const n of c.draft.notes) io.stderr(`calibrate: ${n}\n`);
  writeOutput(io, '-o', flags.output, c.text);
  if (flags.report !== undefined) writeOutput(io, '--report', flags.report, `${JSON.stringify(c.report, null, 2)}\n`);
  if (!flags.quiet) {
    const say = flags.output === STDOUT_PATH ? io.stderr : io.stdout;
    say(
      `${c.draft.header[1]}\nwrote ${flags.output === STDOUT_PATH ? 'the scenario to stdout' : flags.output}\n\n${fitTable(c.report)}\n`,
    );
  }
  return EXIT.ok;
}
