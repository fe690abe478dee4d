import type { Command } from 'commander';
import type { CalibrateFlags } from './commands/calibrate.js';
import { CALIBRATE_HELP } from './commands/calibrate-help.js';
import type { DiffFlags } from './commands/diff.js';
import { DIFF_HELP } from './commands/diff-help.js';
import type { ReportFlags } from './commands/report.js';
import { collect, type CommandContext } from './command-context.js';
import { commandExitHelp } from './command-exits.js';

/** `stormlab report`, `diff` and `calibrate`: the commands that read saved files. Each loads its code on use. */
export function defineFiles(program: Command, { io, exit }: CommandContext): void {
  program
    .command('report')
    .argument('<file>', 'a result (run or compare --json) or sweep (sweep --json) file')
    .description('print a result or sweep file, or write it as one self-contained HTML report with charts (--html)')
    .option('--html <file>', 'write the HTML report here (one file, opens offline)')
    .option(
      '--expect <"metric op value">',
      'judge the saved result by this expectation, as run does (repeatable); exit 1 when one fails',
      collect,
    )
    .option('--junit <file>', 'write the judged expectations as JUnit XML')
    .option('--markdown <file>', 'write the judged expectations as a Markdown summary')
    .option(
      '--allow-partial',
      'judge a partial result (a stopped run) anyway, flagged in every output; without it a partial result is exit 3',
    )
    .addHelpText('after', `\n${commandExitHelp('report', { failed: 'an expectation failed' })}`)
    .action(async (file: string, flags: ReportFlags) => {
      const { reportCommand } = await import('./commands/report.js');
      exit(reportCommand(io, file, flags));
    });

  program
    .command('diff')
    .argument('<base>', 'the baseline result file (stormlab run|compare --json)')
    .argument('<new>', 'the result file to judge against it')
    .description('compare two result files variant by variant; exit 1 when a metric regressed beyond the tolerance')
    .option(
      '--tolerance <share>',
      "how much worse than the base a metric may get: 5% or 0.05 (default 5%), or one metric's: amplification=2%, p99=10% (repeatable)",
      collect,
    )
    .option('--junit <file>', 'write the checks as JUnit XML (one test case per metric and variant)')
    .option('--markdown <file>', 'write the checks as a Markdown summary (for $GITHUB_STEP_SUMMARY)')
    .option('--json <file>', 'write the checks as JSON (schema stormlab.diff/v1)')
    .option('-q, --quiet', 'print only the failed checks')
    .option(
      '--allow-partial',
      'compare partial results (a stopped run) anyway, flagged in every output; without it a partial one is exit 3',
    )
    .addHelpText('after', DIFF_HELP)
    .action(async (base: string, next: string, flags: DiffFlags) => {
      const { diffCommand } = await import('./commands/diff.js');
      exit(diffCommand(io, base, next, flags));
    });

  program
    .command('calibrate')
    .argument('<traces...>', 'OTLP JSON trace files (OTLP/HTTP JSON bodies, or JSON Lines of them)')
    .description(
      'write the scenario your traces describe (call tree, retries, arrivals, models, faults) and print its fit',
    )
    .option('-o, --output <file>', 'the scenario to write (YAML; - for stdout)')
    .option('--report <file>', 'write the fit report as JSON (schema stormlab.calibrate/v1)')
    .option('--faults <name>', 'add a named fault phase over the middle third: brownout, outage or rate-limit')
    .option('--name <name>', "the scenario's name (default calibrated)")
    .option(
      '--serve-log <file>',
      "a stormlab serve --log JSONL of the same run: the upstream's errors from the server (repeatable)",
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option('-q, --quiet', 'print nothing but problems')
    .addHelpText(
      'after',
      `${CALIBRATE_HELP}\n${commandExitHelp('calibrate', { usage: 'bad input: a trace file unreadable, not OTLP JSON, without GenAI spans, or with a cycle of parent ids; a --serve-log that is not one; nothing is written' })}`,
    )
    .action(async (traces: string[], flags: CalibrateFlags) => {
      const { calibrateCommand } = await import('./commands/calibrate.js');
      exit(calibrateCommand(io, traces, flags));
    });
}
