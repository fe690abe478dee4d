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
   * Calls `fn` once when the user asks the process to stop (SIGINT, SIGTERM); returns a function
   * that forgets it. Long-running commands (`serve`) end on it; without it they run until closed.
   */
  onStop?(fn: (signal: string) => void): () => void;
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
 * Exit codes (ARCHITECTURE.md, "A new command"): 0 ok, 1 expectations failed, 2 bad input or
 * usage; a run stopped before its end exits as a shell reports the signal, 128 + its number:
 * 130 for q, Ctrl-C or SIGINT, 143 for SIGTERM (its partial result is still written).
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, interrupted: 130, terminated: 143 } as const;

/** What stopped a run early: the user (q, Ctrl-C, SIGINT) or the system (SIGTERM). */
export type StopCause = 'SIGINT' | 'SIGTERM';

export function stopExit(cause: StopCause): number {
  return cause === 'SIGTERM' ? EXIT.terminated : EXIT.interrupted;
}
