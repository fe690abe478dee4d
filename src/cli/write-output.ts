import { UsageError, type Io } from './io.js';

const WRITE_ERRORS: Record<string, string> = {
  ENOENT: 'its directory does not exist',
  ENOTDIR: 'a part of its path is not a directory',
  EISDIR: 'it is a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the file system is read-only',
};

/** `-` as an output path: standard output. */
export const STDOUT_PATH = '-';

/** Writes an output file (`-`: stdout); failing to is the user's to fix (exit 2), not an internal error. */
export function writeOutput(io: Io, flag: string, path: string, data: string): void {
  if (path === STDOUT_PATH) return io.stdout(data);
  try {
    io.writeFile(path, data);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? '';
    throw new UsageError(`${flag}: cannot write ${path}: ${WRITE_ERRORS[code] ?? (e as Error).message}`);
  }
}

/**
 * Checks output paths before the work that fills them, so a bad directory costs no run:
 * one line naming the flag, exit 2. At most one of them may be `-` (stdout).
 */
export function checkOutputs(io: Io, outputs: ReadonlyArray<readonly [flag: string, path: string | undefined]>): void {
  const toStdout = outputs.filter(([, p]) => p === STDOUT_PATH).map(([f]) => f);
  if (toStdout.length > 1) throw new UsageError(`${toStdout.join(' and ')}: only one output can go to stdout (-)`);
  for (const [flag, path] of outputs) {
    if (path === undefined || path === STDOUT_PATH) continue;
    if (path.trim() === '') throw new UsageError(`${flag}: expected a file path, got ""`);
    const code = io.checkWritable?.(path);
    if (code !== undefined) throw new UsageError(`${flag}: cannot write ${path}: ${WRITE_ERRORS[code] ?? code}`);
  }
}

/**
 * The io a command prints its text through when one of its outputs is `-`: stdout is then that
 * file alone (a pipe gets JSON, not JSON after a table), so the text goes to stderr.
 */
export function textIo(io: Io, outputs: ReadonlyArray<string | undefined>): Io {
  return outputs.includes(STDOUT_PATH) ? { ...io, stdout: (t) => io.stderr(t) } : io;
}
