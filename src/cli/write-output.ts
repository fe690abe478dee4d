import { UsageError, type Io } from './io.js';

const WRITE_ERRORS: Record<string, string> = {
  ENOENT: 'its directory does not exist',
  ENOTDIR: 'a part of its path is not a directory',
  EISDIR: 'it is a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the file system is read-only',
};

/** Writes an output file; failing to is the user's to fix (exit 2), not an internal error. */
export function writeOutput(io: Io, flag: string, path: string, data: string): void {
  try {
    io.writeFile(path, data);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? '';
    throw new UsageError(`${flag}: cannot write ${path}: ${WRITE_ERRORS[code] ?? (e as Error).message}`);
  }
}
