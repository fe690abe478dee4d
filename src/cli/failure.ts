import { CommanderError } from 'commander';
import { ScenarioError } from '../scenario/scenario-error.js';
import { EXIT, UsageError, type Io } from './io.js';

/** Turns what went wrong into one clear line per problem and an exit code; never a stack for bad input. */
export function failure(io: Io, err: unknown): number {
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
