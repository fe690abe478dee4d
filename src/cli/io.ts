import { StormlabError } from '../engine/errors.js';

/** What a command may touch of the outside world; tests pass captured ones. */
export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Writes a file (for --json and friends). */
  writeFile(path: string, data: string): void;
  /**
   * Why `path` could not be written, as an errno code (`ENOENT` for a missing directory), or
   * undefined when it could: output paths are checked before a run, so a typo costs no run.
   * Without it nothing is checked ahead.
   */
  checkWritable?(path: string): string | undefined;
  cwd: string;
  env: Record<string, string | undefined>;
  isTTY: boolean;
  /** Wall-clock milliseconds, for the `timing` part of results only. */
  wallNow(): number;
  /** The interactive terminal, when there is one (the dashboard draws on it). */
  terminal?: Terminal;
  /**
   * Calls `fn` once when the process is asked to stop (SIGINT, SIGTERM), or when stdout or
   * stderr is a pipe whose reader went away (`SIGPIPE`: an EPIPE on a write, or the signal;
   * what is written there after it is dropped); returns a function that forgets it.
   * Long-running commands (`serve`) end on it; without it they run until closed.
   */
  onStop?(fn: (signal: string) => void): () => void;
  /**
   * Runs `cleanup` if the process dies of an error nothing caught (an uncaught exception or an
   * unhandled rejection): the error is printed, cleanups are awaited (bounded), exit code 70.
   * For what must not outlive the process, such as fault phases installed in another server.
   * Returns a function that forgets it.
   */
  onCrash?(cleanup: () => Promise<unknown>): () => void;
}

export interface Terminal {
  stdout: NodeJS.WriteStream;
  stdin: NodeJS.ReadStream;
}

/** A problem with what the user gave us: one line on stderr, exit code 2. */
export class UsageError extends StormlabError {
  constructor(message: string) {
    super('ERR_STORMLAB_USAGE', message);
  }
}

/**
 * A partial result given to a gate (`report --expect`, `diff`) without --allow-partial: one
 * line, exit 3. Part of a run proves nothing either way, so it must not pass a gate unseen.
 */
export class PartialResultError extends StormlabError {
  constructor(message: string) {
    super('ERR_STORMLAB_PARTIAL', message);
  }
}

/**
 * The exit codes of every command, one table (README "Exit codes", each command's --help):
 * 1 means only that an expectation or gate failed; a stopped run exits as a shell reports the
 * signal, 128 + its number.
 */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  partial: 3,
  noTarget: 4,
  internal: 70,
  interrupted: 130,
  brokenPipe: 141,
  terminated: 143,
} as const;

export type ExitName = keyof typeof EXIT;

/** What each exit code means, as README's table and every --help say it. */
export const EXIT_MEANINGS: Readonly<Record<ExitName, string>> = {
  ok: 'ok',
  failed: 'an expectation or gate failed',
  usage: 'bad input or usage (one line naming what and where)',
  partial: 'a partial result: a run lost part of its work, or a gate or diff was given one without --allow-partial',
  noTarget: 'the live --target never answered',
  internal: 'internal error (a bug: please report it)',
  interrupted: 'stopped by Ctrl-C or SIGINT (or q in the dashboard)',
  brokenPipe: 'its output pipe closed (EPIPE or SIGPIPE)',
  terminated: 'stopped by SIGTERM',
};

/**
 * The `Exit codes:` block of a command's --help: the codes it can end with, each with its
 * meaning from the one table (`ok` may be worded for the command: `0 a point met every constraint`).
 */
export function exitHelp(names: readonly ExitName[], wording: Partial<Record<ExitName, string>> = {}): string {
  const lines = names.map((n) => `  ${String(EXIT[n]).padStart(3)}  ${wording[n] ?? EXIT_MEANINGS[n]}`);
  return `Exit codes:\n${lines.join('\n')}`;
}

/** What stopped a run early: the user (q, Ctrl-C, SIGINT), the system (SIGTERM), or a reader that left (SIGPIPE). */
export type StopCause = 'SIGINT' | 'SIGTERM' | 'SIGPIPE';

/** The cause of a stop `onStop` reported (anything else it might say is the user's stop). */
export function stopCause(signal: string): StopCause {
  return signal === 'SIGTERM' || signal === 'SIGPIPE' ? signal : 'SIGINT';
}

export function stopExit(cause: StopCause): number {
  return cause === 'SIGTERM' ? EXIT.terminated : cause === 'SIGPIPE' ? EXIT.brokenPipe : EXIT.interrupted;
}
