import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** The most a scenario file may hold: far more than any hand-written or generated scenario. */
export const SCENARIO_MAX_BYTES = 16 * 1024 * 1024;
/** The most a `proxy --faults` file may hold: it is a list of fault phases, read whole like a scenario. */
export const FAULTS_MAX_BYTES = 16 * 1024 * 1024;
/** The most a result or sweep file (`report`, `diff`) may hold: a 10,000-point sweep is well under it. */
export const RESULT_MAX_BYTES = 256 * 1024 * 1024;

/** What an errno from opening a file means, in words. */
const OPEN_ERRORS: Record<string, string> = {
  ENOENT: 'no such file',
  ENOTDIR: 'a part of its path is not a directory',
  EISDIR: 'it is a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
};

/** A file that is not one to read: why, in words (`is a fifo, not a regular file`), or its errno code. */
export class UnreadableFile extends Error {
  constructor(
    readonly why: string,
    readonly code?: string,
  ) {
    super(why);
  }

  /** Why, in words, for `cannot read FILE: …` (an errno in words, not the system's message with the path). */
  get reason(): string {
    return (this.code === undefined ? undefined : OPEN_ERRORS[this.code]) ?? this.why;
  }
}

/**
 * A descriptor on `path` once it is known to be a regular file: opened without blocking (a fifo
 * does not hang the open), checked by `fstat` on that descriptor (a symlink to `/dev/zero` is
 * the device it names, refused; so is a directory). The caller reads and closes it. Throws
 * `UnreadableFile`.
 */
export function openRegularFile(path: string): { fd: number; size: number } {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UnreadableFile((e as Error).message, code);
  }
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) throw new UnreadableFile('is a directory', 'EISDIR');
    if (!st.isFile()) throw new UnreadableFile(`is ${kindOf(st)}, not a regular file`);
    return { fd, size: st.size };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/**
 * The text of a regular file (see `openRegularFile`) of at most `maxBytes`, read through one
 * descriptor no further than `maxBytes` (a file that grows meanwhile is refused, never read to
 * the end). Throws `UnreadableFile`.
 */
export function readBoundedFile(path: string, maxBytes: number): string {
  const { fd, size } = openRegularFile(path);
  try {
    if (size > maxBytes) throw new UnreadableFile(tooBig(size, maxBytes));
    const chunks: Buffer[] = [];
    let got = 0;
    for (;;) {
      const chunk = Buffer.alloc(Math.min(1 << 20, maxBytes + 1 - got));
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      chunks.push(chunk.subarray(0, n));
      got += n;
      if (got > maxBytes) throw new UnreadableFile(tooBig(maxBytes, maxBytes, true));
    }
    return Buffer.concat(chunks).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

function tooBig(size: number, max: number, growing = false): string {
  return `is larger than the ${mib(max)} stormlab reads (${growing ? 'over ' : ''}${size.toLocaleString('en-US')} bytes)`;
}

function mib(bytes: number): string {
  return `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`;
}

function kindOf(st: import('node:fs').Stats): string {
  if (st.isFIFO()) return 'a fifo (named pipe)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a file';
}
