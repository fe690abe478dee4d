import { CommanderError } from 'commander';
import { StormlabError } from '../engine/errors.js';
import { escapeControls } from '../scenario/control-chars.js';
import { ScenarioError, shownProblems } from '../scenario/scenario-error.js';
import { EXIT, type Io } from './io.js';

/**
 * The exit code of every user-facing error, by its stable `code` (every error stormlab throws
 * is a `StormlabError` with one). These are the user's to fix — bad input, a flag, a file, a
 * target or a queue that cannot be used — and print as they are, one line per problem, never a
 * stack. A `StormlabError` whose code is not here (a shed, a timeout, a failed point) escaping
 * to the top is a bug, and prints as one, with its stack.
 */
const USER_ERROR_EXITS: Readonly<Record<string, number>> = {
  ERR_STORMLAB_USAGE: EXIT.usage,
  ERR_STORMLAB_SCENARIO: EXIT.usage,
  ERR_STORMLAB_OPTION: EXIT.usage,
  ERR_STORMLAB_GATE: EXIT.usage,
  ERR_STORMLAB_SWEEP: EXIT.usage,
  ERR_STORMLAB_TUNE: EXIT.usage,
  ERR_STORMLAB_REFUSED: EXIT.usage,
  ERR_STORMLAB_QUEUE: EXIT.usage,
  ERR_STORMLAB_MISSING_PEER: EXIT.usage,
  ERR_STORMLAB_TARGET_REFUSED: EXIT.usage,
  ERR_STORMLAB_UPSTREAM_CONTROL: EXIT.usage,
  ERR_STORMLAB_PARTIAL: EXIT.partial,
  ERR_STORMLAB_QUEUE_LOST: EXIT.partial,
  ERR_STORMLAB_NO_TARGET: EXIT.noTarget,
  ERR_STORMLAB_CALIBRATE: EXIT.usage,
};

/** The exit code of a user-facing error's code; undefined for any other (a bug). */
function exitCodeOf(code: string): number | undefined {
  return Object.hasOwn(USER_ERROR_EXITS, code) ? USER_ERROR_EXITS[code] : undefined;
}

/** Turns what went wrong into one clear line per problem and an exit code; never a stack for bad input. */
export function failure(io: Io, err: unknown): number {
  if (err instanceof CommanderError) {
    // --help and --version exit 0; help shown because no command was given is a usage error.
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help')
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    io.stderr(`stormlab: ${escapeControls(commanderLine(err.message))}\n`);
    return EXIT.usage;
  }
  const exit = err instanceof StormlabError ? exitCodeOf(err.code) : undefined;
  if (exit !== undefined) {
    // A file name or flag may hold terminal escapes too: printed escaped, never raw.
    for (const line of problemLines(err as StormlabError)) io.stderr(`${escapeControls(line)}\n`);
    return exit;
  }
  io.stderr(`stormlab: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  return EXIT.internal;
}

/** A user-facing error as printed: a scenario's problems each after where they are, any other's lines after `stormlab:`. */
function problemLines(err: StormlabError): string[] {
  if (err instanceof ScenarioError) return shownProblems(err.problems).map((p) => problemLine(err.source, p));
  const problems = (err as { problems?: unknown }).problems;
  const lines = Array.isArray(problems) ? problems.map(String) : err.message.split('\n');
  return shownProblems(lines).map((l) => (l.startsWith('stormlab: ') ? l : `stormlab: ${l}`));
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
 * and terminals link to; a problem of a flag (`--set "…"`, `--variant`) is the command line's, not the file's.
 */
function problemLine(source: string, problem: string): string {
  const pos = /^(\d+):(\d+): /.exec(problem);
  if (pos !== null) return `${source}:${pos[1]}:${pos[2]}: ${problem.slice(pos[0].length)}`;
  if (problem.startsWith('--')) return `stormlab: ${problem}`;
  return `${source}: ${problem}`;
}
