import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { initHistograms } from '../run/metrics/histogram.js';
import { ScenarioError } from '../scenario/scenario-error.js';
import { EXIT, UsageError, type Io } from './io.js';
import { compareCommand, report, runCommand, type RunFlags } from './commands/run.js';
import { DIFF_HELP, diffCommand, type DiffFlags } from './commands/diff.js';
import { scenariosCommand } from './commands/scenarios.js';
import { SERVE_DEFAULTS, serveCommand, type ServeFlags } from './commands/serve.js';

/** The package's version (package.json sits two folders up from src/cli and dist/cli alike). */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
    .version;
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

function scenarioOptions(cmd: Command): Command {
  return cmd
    .option('--seed <n>', 'seed for every random draw (same seed, same result)')
    .option('--set <path=value>', 'override a scenario field, e.g. upstream.faults[0].rate=0.5 (repeatable)', collect)
    .option('--duration <d>', 'run length, e.g. 30s or 2m')
    .option('--json <file>', 'write the result as JSON (schema stormlab.result/v1)')
    .option('-q, --quiet', 'print only the headline')
    .option('--no-ui', 'no dashboard: plain progress lines, as when stdout is not a terminal or CI=true')
    .option(
      '--speed <x>',
      'dashboard playback speed of the simulated run: 10x, 0.5x or max (default: about 15 s to watch)',
    )
    .option('--mode <mode>', 'sim (virtual time, the default) or live (real HTTP on the real clock)')
    .option(
      '--target <url>',
      'live: an OpenAI-compatible base URL to load (default: a fake upstream started in-process)',
    )
    .option(
      '--header <"Name: value">',
      'live: a header to send with every request, e.g. "Authorization: Bearer $KEY" (repeatable)',
      collect,
    )
    .option('--connections <n>', "live: connections of the HTTP pool (default: the scenario's live.connections, 256)")
    .option(
      '--upstream <url>',
      "live, with --target: the stormlab serve behind that gateway; the scenario's faults are injected there and what reaches it is measured",
    )
    .option(
      '--expect <"metric op value">',
      'an expectation to judge, besides the scenario\'s expect: list, e.g. "variants.engine.amplification < 1.5" (repeatable); exit 1 when one fails',
      collect,
    )
    .option('--junit <file>', 'write the judged expectations as JUnit XML (one test case each)')
    .option('--markdown <file>', 'write the judged expectations as a Markdown summary (for $GITHUB_STEP_SUMMARY)');
}

/** Builds the CLI; `run(argv)` resolves to the exit code. Nothing here touches process.* directly. */
export function createProgram(io: Io): { run(argv: string[]): Promise<number> } {
  let code: number = EXIT.ok;
  const program = new Command('stormlab')
    .description(
      'Retry storms in LLM and multi-agent backends: reproduce them, measure them, tame them with the engine.',
    )
    .version(packageVersion(), '-V, --version')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout(s), writeErr: (s) => io.stderr(s), outputError: () => {} })
    .showSuggestionAfterError(true);

  scenarioOptions(
    program
      .command('run')
      .argument('<scenario>', 'a scenario file, or the name of a bundled one')
      .description('run a scenario once (simulated, or live with --mode live) and print its summary'),
  )
    .option('--variant <name>', "run one of the scenario's variants instead of the scenario as written")
    .action(async (arg: string, flags: RunFlags) => {
      code = report(io, await runCommand(io, arg, flags), flags);
    });

  scenarioOptions(
    program
      .command('compare')
      .argument('<scenario>', 'a scenario file, or the name of a bundled one')
      .description('run the same scenario and seed under each policy variant, side by side'),
  )
    .option('--variants <list>', 'comma-separated variant names (default: all the scenario defines)')
    .action(async (arg: string, flags: RunFlags) => {
      code = report(io, await compareCommand(io, arg, flags), flags);
    });

  program
    .command('serve')
    .description('start the fake LLM upstream (OpenAI- and Anthropic-compatible, faults and all) until Ctrl-C')
    .option('--port <n>', 'port to listen on (0 picks a free one)', SERVE_DEFAULTS.port)
    .option('--host <address>', 'address to listen on', SERVE_DEFAULTS.host)
    .option('--scenario <file>', 'take the models and fault phases from a scenario (a file or a bundled name)')
    .option('--models <names>', 'more models (a,b) and aliases (gpt-4o-mini=primary), comma-separated')
    .option('--strict-models', 'answer names no model or alias has with 404 (default: the first model serves them)')
    .option('--tool-rounds <n>', 'tool-calling turns before the model answers in text (default 1)')
    .option('--parallel-tools <n>', 'tool calls in one turn (default 1)')
    .option('--seed <n>', 'seed for tool-call arguments and structured outputs (default 0)')
    .option(
      '--log <file>',
      'append one JSON line per model request (route, model, retry count, status, fault, latency)',
    )
    .action(async (flags: ServeFlags) => {
      code = await serveCommand(io, flags);
    });

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
    .action(async (file: string, flags: import('./commands/report.js').ReportFlags) => {
      // Loaded on use: the other commands need none of the report's HTML code.
      const { reportCommand } = await import('./commands/report.js');
      code = reportCommand(io, file, flags);
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
    .addHelpText('after', DIFF_HELP)
    .action((base: string, next: string, flags: DiffFlags) => {
      code = diffCommand(io, base, next, flags);
    });

  program
    .command('sweep')
    .argument('<scenario>', 'a scenario file, or the name of a bundled one')
    .description(
      'run a grid of engine parameters by simulation; print every point, a heatmap of the metric and the Pareto front',
    )
    .option(
      '--param <path=values>',
      'a --set path and the values to sweep it over: engine.throttle.k=1.1,1.5,2,3 or =1:3:0.5 (repeatable; the grid is every combination)',
      collect,
    )
    .option('--metric <name>', 'the metric of the heatmap, any name --expect takes (default: goodput)')
    .option(
      '--variant <name>',
      'the variant every point runs (default: engine when the scenario has it, else the scenario as written)',
    )
    .option('--workers <n>', 'simulations run at once (default: one less than the cores, at least 1)')
    .option('--seed <n>', 'seed of every point (same seed, same table)')
    .option('--set <path=value>', 'override a scenario field for every point (repeatable)', collect)
    .option('--duration <d>', 'run length of every point, e.g. 30s or 2m')
    .option('--json <file>', 'write every point as JSON (schema stormlab.sweep/v1; stormlab report reads it)')
    .option('--csv <file>', 'write every point as CSV, one row each')
    .option('-q, --quiet', "print only the best point's line")
    .addHelpText(
      'after',
      "\nEvery point runs the same scenario and seed, the variant's overrides on top of the point's values.\nExample: stormlab sweep brownout --param engine.throttle.k=1.1,1.5,2,3 --param engine.retryBudget.ratio=0.05,0.1,0.2\nExit codes: 0 ok, 2 bad input.",
    )
    .action(async (arg: string, flags: import('./commands/sweep.js').SweepFlags) => {
      // Loaded on use, like tune: the other commands need none of the sweep.
      const { sweepCommand } = await import('./commands/sweep.js');
      code = await sweepCommand(io, arg, flags);
    });

  program
    .command('tune')
    .argument('<scenario>', 'a scenario file, or the name of a bundled one')
    .description(
      'search engine parameters by simulation for the best objective under constraints; print them as an engine: block',
    )
    .option('--maximize <metric>', 'the metric to make as high as possible, e.g. goodput')
    .option('--minimize <metric>', 'the metric to make as low as possible, e.g. amplification')
    .option(
      '--subject-to <expectation>',
      'a constraint every answer must meet, as --expect writes it: "amplification <= 1.2" (repeatable)',
      collect,
    )
    .option(
      '--params <list>',
      "comma-separated --set paths, each with a range low:high[:int][:log] or an engine knob's built-in one (repeatable)",
      collect,
    )
    .option(
      '--variant <name>',
      'the variant to tune (default: engine when the scenario has it, else the scenario as written)',
    )
    .option('--budget <n>', 'points to simulate at most, besides the current values (default: 60)')
    .option('--workers <n>', 'simulations run at once (default: one less than the cores, at least 1)')
    .option('--seed <n>', 'seed of every point (same seed, same answer)')
    .option('--set <path=value>', 'override a scenario field for every point (repeatable)', collect)
    .option('--duration <d>', 'run length of every point, e.g. 30s or 2m')
    .option('--json <file>', 'write the best point, the baseline and every point as JSON (schema stormlab.tune/v1)')
    .option('-q, --quiet', "print only the answer's line")
    .addHelpText(
      'after',
      '\nExample: stormlab tune brownout --maximize goodput --subject-to "amplification <= 1.2" --params engine.throttle.k,engine.retryBudget.ratio=0.02:0.4:log\nExit codes: 0 a point met every constraint, 1 none did, 2 bad input.',
    )
    .action(async (arg: string, flags: import('./commands/tune.js').TuneFlags) => {
      // Loaded on use, like report: the other commands need none of the search.
      const { tuneCommand } = await import('./commands/tune.js');
      code = await tuneCommand(io, arg, flags);
    });

  program
    .command('scenarios')
    .description('list the bundled scenarios')
    .action(() => {
      code = scenariosCommand(io);
    });

  return {
    async run(argv: string[]): Promise<number> {
      try {
        await initHistograms();
        await program.parseAsync(argv, { from: 'user' });
        return code;
      } catch (err) {
        return failure(io, err);
      }
    },
  };
}

/** Turns what went wrong into one clear line per problem and an exit code; never a stack for bad input. */
function failure(io: Io, err: unknown): number {
  if (err instanceof CommanderError) {
    // --help and --version exit 0; help shown because no command was given is a usage error.
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help')
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    io.stderr(`stormlab: ${commanderLine(err.message)}\n`);
    return EXIT.usage;
  }
  if (err instanceof ScenarioError) {
    for (const line of err.problems) io.stderr(`${problemLine(err.source, line)}\n`);
    return EXIT.usage;
  }
  if (err instanceof UsageError) {
    io.stderr(`stormlab: ${err.message}\n`);
    return EXIT.usage;
  }
  io.stderr(`stormlab: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  return 70;
}

/** Commander's message on one line: `unknown command 'rn' (did you mean run?)`. */
function commanderLine(message: string): string {
  return message
    .replace(/^error: /, '')
    .replace(/\s*\n\(Did you mean/, ' (did you mean')
    .replace(/\s*\n\s*/g, ' ')
    .trim();
}

/**
 * One scenario problem as printed. A text position becomes `file:3:7: ...`, the form editors
 * and terminals link to; a bad `--set` flag is the command line's problem, not the file's.
 */
function problemLine(source: string, problem: string): string {
  const pos = /^(\d+):(\d+): /.exec(problem);
  if (pos !== null) return `${source}:${pos[1]}:${pos[2]}: ${problem.slice(pos[0].length)}`;
  if (problem.startsWith('--set ')) return `stormlab: ${problem}`;
  return `${source}: ${problem}`;
}
