import type { Command } from 'commander';
import { QUEUE_WAIT_DEFAULT_MS } from '../explore/queue-watch.js';
import { formatDuration } from '../upstream/duration.js';
import type { SweepFlags } from './commands/sweep.js';
import type { TuneFlags } from './commands/tune.js';
import type { WorkerFlags } from './commands/worker.js';
import { collect, PRECEDENCE, type CommandContext } from './command-context.js';
import { commandExitHelp } from './command-exits.js';

/** What the options sweep and tune share say about each command's points. */
interface ExploreWords {
  variant: string;
  seeds: string;
  json: string;
  quiet: string;
  queueWait: string;
}

/** The options of every search by simulation (sweep, tune), written once. */
function exploreOptions(cmd: Command, words: ExploreWords): Command {
  return cmd
    .option(
      '--variant <name>',
      `${words.variant} (default: engine when the scenario has it, else the scenario as written)`,
    )
    .option(
      '--workers <n>',
      'simulations run at once, or auto (the default): one unless the first points take long enough for threads to pay',
    )
    .option('--seed <n>', 'seed of every point (same seed, same table)')
    .option('--seeds <n>', words.seeds)
    .option(
      '--set <path=value>',
      "override a scenario field for every point (repeatable; wins over the variant's overrides)",
      collect,
    )
    .option('--duration <d>', 'run length of every point, e.g. 30s or 2m')
    .option('--json <file>', words.json)
    .option(
      '--queue <redis-url>',
      'put the points on a BullMQ queue at this Redis (redis://host:6379[/db][?queue=name]) for `stormlab worker`s to run',
    )
    .option('--queue-wait <duration>', words.queueWait)
    .option('-q, --quiet', words.quiet);
}

/** `stormlab sweep` and `stormlab tune`. */
export function defineExplore(program: Command, { io, exit }: CommandContext): void {
  exploreOptions(
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
      .option('--csv <file>', 'write every point as CSV, one row each'),
    {
      variant: 'the variant every point runs',
      seeds: 'run every point on n seeds (--seed, then the next ones) and show means with 95 % intervals (default: 1)',
      json: 'write every point as JSON (schema stormlab.sweep/v1; stormlab report reads it)',
      quiet: "print only the best point's line",
      queueWait: `how long the Redis of --queue may be away mid-run before the command fails, exit 3 (default ${formatDuration(QUEUE_WAIT_DEFAULT_MS)})`,
    },
  )
    .addHelpText(
      'after',
      `\nEvery point runs the same scenario and seed. A point's values are command-line values: they\napply after the variant's overrides and --set, and win.\n${PRECEDENCE}\nExample: stormlab sweep brownout --param engine.throttle.k=1.1,1.5,2,3 --param engine.retryBudget.ratio=0.05,0.1,0.2\n${commandExitHelp('sweep')}`,
    )
    .action(async (arg: string, flags: SweepFlags) => {
      const { sweepCommand } = await import('./commands/sweep.js');
      exit(await sweepCommand(io, arg, flags));
    });

  exploreOptions(
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
      .option('--budget <n>', 'points to simulate at most, besides the current values (default: 60)'),
    {
      variant: 'the variant to tune',
      seeds:
        'judge every point on n seeds (--seed, then the next ones): means, 95 % intervals, and whether the answer beats the current values beyond noise (default: 5)',
      json: 'write the best point, the baseline and every point as JSON (schema stormlab.tune/v1)',
      quiet: "print only the answer's line",
      queueWait: `how long the Redis of --queue may be away mid-run before the command fails, exit 3 (default ${formatDuration(QUEUE_WAIT_DEFAULT_MS)})`,
    },
  )
    .addHelpText(
      'after',
      `\nA point's values apply after the variant's overrides and --set, and win; the current values are\nthose of the variant under --set.\n${PRECEDENCE}\nExample: stormlab tune brownout --maximize goodput --subject-to "amplification <= 1.2" --params engine.throttle.k,engine.retryBudget.ratio=0.02:0.4:log\n${commandExitHelp('tune', { ok: 'a point met every constraint', failed: 'no point did (the closest is shown)' })}`,
    )
    .action(async (arg: string, flags: TuneFlags) => {
      const { tuneCommand } = await import('./commands/tune.js');
      exit(await tuneCommand(io, arg, flags));
    });
}

/** `stormlab worker`: runs the points sweeps and tunes put on a queue, on this machine. */
export function defineWorker(program: Command, { io, exit }: CommandContext): void {
  program
    .command('worker')
    .description('take the points of sweep|tune --queue off a Redis queue and simulate them, until Ctrl-C')
    .option('--queue <redis-url>', 'the Redis of the queue, as sweep|tune --queue names it')
    .option('--concurrency <n>', 'points simulated at once, one thread each (default: 1)')
    .option(
      '--queue-wait <duration>',
      `how long its Redis may be away before the worker gives up, exit 3 (default ${formatDuration(QUEUE_WAIT_DEFAULT_MS)})`,
    )
    .addHelpText(
      'after',
      `\nExample: stormlab worker --queue redis://10.0.0.5:6379 --concurrency 4   (on each machine of the fleet)\nThen:    stormlab sweep brownout --param engine.throttle.k=1.1:3:0.1 --seeds 5 --queue redis://10.0.0.5:6379\n${commandExitHelp('worker', { ok: 'stopped (Ctrl-C or SIGTERM), after the points in hand' })}`,
    )
    .action(async (flags: WorkerFlags) => {
      const { workerCommand } = await import('./commands/worker.js');
      exit(await workerCommand(io, flags));
    });
}
