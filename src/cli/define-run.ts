import type { Command } from 'commander';
import { FLEET_DEFAULTS } from '../explore/fleet-protocol.js';
import { SETTLE_DEFAULTS } from '../run/live/settle-defaults.js';
import { formatDuration } from '../upstream/duration.js';
import type { RunFlags } from './commands/run.js';
import { collect, PRECEDENCE, type CommandContext } from './command-context.js';
import { commandExitHelp } from './command-exits.js';

/** The options `run` and `compare` share: the scenario's overrides, the outputs, sim or live, the gate. */
function scenarioOptions(cmd: Command): Command {
  return cmd
    .option('--seed <n>', 'seed for every random draw (same seed, same result)')
    .option(
      '--set <path=value>',
      "override a scenario field, e.g. upstream.faults[0].rate=0.5 (repeatable; wins over the variant's overrides)",
      collect,
    )
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
      "live, with --target: the stormlab serve behind that gateway; the scenario's faults are injected there and what reaches it is measured (hop 2)",
    )
    .option(
      '--settle-quiet <d>',
      `live, with --upstream: hop 2 is read once the upstream has had nothing in flight for this long, longer than the gateway's backoff (default ${formatDuration(SETTLE_DEFAULTS.quietMs)})`,
    )
    .option(
      '--settle-timeout <d>',
      `live, with --upstream: the longest wait for that after the driver stopped; then hop 2 is read as it is, marked unsettled (default ${formatDuration(SETTLE_DEFAULTS.timeoutMs)})`,
    )
    .option(
      '--queue <redis-url>',
      'live, with --workers: the Redis whose queue `stormlab worker`s take shares of the run from (redis://host:6379[/db][?queue=name])',
    )
    .option(
      '--workers <n>',
      'live, with --queue: split the root arrivals into n shares by seed, one per worker, started at one instant, merged into one result',
    )
    .option(
      '--fleet-wait <d>',
      `live, with --workers: how long to wait for n workers to take their shares before refusing to start (default ${formatDuration(FLEET_DEFAULTS.waitMs)})`,
    )
    .option(
      '--allow-partial',
      'a fleet run that lost a worker (its share is named in the result) exits as if whole, not 3',
    )
    .option(
      '--expect <"metric op value">',
      'an expectation to judge, besides the scenario\'s expect: list, e.g. "variants.engine.amplification < 1.5" (repeatable); exit 1 when one fails',
      collect,
    )
    .option('--junit <file>', 'write the judged expectations as JUnit XML (one test case each)')
    .option('--markdown <file>', 'write the judged expectations as a Markdown summary (for $GITHUB_STEP_SUMMARY)');
}

/**
 * Loads what a run needs when it runs (the scenario loader, the simulator; the dashboard and
 * the live driver only further down, when asked for), so `--help` and the other commands
 * start without it.
 */
function runModule(): Promise<typeof import('./commands/run.js')> {
  return import('./commands/run.js');
}

/** The exit codes of run and compare, for their --help. */
const runExits = (command: 'run' | 'compare'): string =>
  `${PRECEDENCE}\n${commandExitHelp(command, { failed: 'an expectation failed' })}\n` +
  'A stopped run still writes its result, marked "partial": true. With --upstream, the upstream gets its own\n' +
  'fault phases back whatever ends the run (a first q or Ctrl-C still lets hop 2 settle).';

/** `stormlab run` and `stormlab compare`. */
export function defineRun(program: Command, { io, exit }: CommandContext): void {
  scenarioOptions(
    program
      .command('run')
      .argument('<scenario>', 'a scenario file, or the name of a bundled one')
      .description('run a scenario once (simulated, or live with --mode live) and print its summary'),
  )
    .option('--variant <name>', "run one of the scenario's variants instead of the scenario as written")
    .addHelpText(
      'after',
      `\nExamples:\n  stormlab run retry-storm\n  stormlab run my.yaml --set 'layers[*].retry.attempts=2' --json result.json\n${runExits('run')}`,
    )
    .action(async (arg: string, flags: RunFlags) => {
      const { report, runCommand } = await runModule();
      exit(report(io, await runCommand(io, arg, flags), flags));
    });

  scenarioOptions(
    program
      .command('compare')
      .argument('<scenario>', 'a scenario file, or the name of a bundled one')
      .description('run the same scenario and seed under each policy variant, side by side'),
  )
    .option('--variants <list>', 'comma-separated variant names (default: all the scenario defines)')
    .addHelpText(
      'after',
      `\nExamples:\n  stormlab compare retry-storm\n  stormlab compare brownout --expect 'variants.engine.amplification < 1.5' --junit junit.xml\n${runExits('compare')}`,
    )
    .action(async (arg: string, flags: RunFlags) => {
      const { report, compareCommand } = await runModule();
      exit(report(io, await compareCommand(io, arg, flags), flags));
    });
}
