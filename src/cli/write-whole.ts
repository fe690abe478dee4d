import { lstatSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';

/** Errors creating a file beside the target that a plain write of the target may not meet. */
const NO_SIBLING = new Set(['EACCES', 'EPERM', 'EROFS']);

/**
 * Writes `data` to the regular file `path` whole or not at all: into a file beside it, then
 * renamed over it, so a write cut short (a full disk, a crash) leaves the old file — or none —
 * never half of the new one. A path that is something else (a symlink, a fifo, `/dev/stdout`)
 * is written as it is; so is a target whose directory takes no new file.
 */
export function writeWhole(path: string, data: string): void {
  let mode: number | undefined;
  try {
    const st = lstatSync(path);
    if (!st.isFile()) return writeFileSync(path, data);
    mode = st.mode & 0o7777;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const temp = `${path}.${process.pid}.partial`;
  try {
    writeFileSync(temp, data, mode === undefined ? undefined : { mode });
  } catch (e) {
    removeQuietly(temp);
    if (NO_SIBLING.has((e as NodeJS.ErrnoException).code ?? '')) return writeFileSync(path, data);
    throw e;
  }
  try {
    renameSync(temp, path);
  } catch (e) {
    removeQuietly(temp);
    throw e;
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Not there, or not a file: nothing of ours to remove.
  }
}
