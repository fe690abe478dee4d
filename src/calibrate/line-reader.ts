import { closeSync, readSync } from 'node:fs';
import { openRegularFile, UnreadableFile } from '../scenario/read-bounded-file.js';
import { CalibrateError } from './calibrate-error.js';

/** Read a file this much at a time. */
const CHUNK = 1 << 20;
/**
 * The most one line may take: a line is decoded whole, so this bounds what a single one costs.
 * The Collector's file exporter writes one batch per line, far smaller.
 */
export const MAX_LINE_BYTES = 256 * 1024 * 1024;

/**
 * Streams the lines of a file to `onLine` (numbered from 1), a chunk at a time: what is held is
 * one chunk and one line. Lines are split on the newline byte, which never occurs inside a UTF-8
 * sequence, and each is decoded on its own: no decoder state, no string carried across chunks.
 */
export function readLines(path: string, label: string, onLine: (line: string, lineNo: number) => void): void {
  let fd: number;
  try {
    // A regular file only (a fifo or a link to /dev/zero is refused, not read forever); of any
    // size, since it is streamed: what bounds memory is MAX_LINE_BYTES and what the caller holds.
    fd = openRegularFile(path).fd;
  } catch (e) {
    if (!(e instanceof UnreadableFile)) throw e;
    throw new CalibrateError(`cannot read ${label}: ${e.reason}`);
  }
  const buf = Buffer.allocUnsafe(CHUNK);
  let lineNo = 0;
  let carry: Buffer | undefined;
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, CHUNK, null);
      if (n === 0) {
        if (carry !== undefined && carry.length > 0) onLine(carry.toString('utf8'), ++lineNo);
        break;
      }
      let from = 0;
      for (let nl = buf.indexOf(10, 0); nl >= 0 && nl < n; nl = buf.indexOf(10, from)) {
        if (carry !== undefined) {
          onLine(Buffer.concat([carry, buf.subarray(0, nl)]).toString('utf8'), ++lineNo);
          carry = undefined;
        } else onLine(buf.toString('utf8', from, nl), ++lineNo);
        from = nl + 1;
      }
      if (from < n) {
        const rest = Buffer.from(buf.subarray(from, n));
        carry = carry === undefined ? rest : Buffer.concat([carry, rest]);
        if (carry.length > MAX_LINE_BYTES)
          throw new CalibrateError(`${label}:${lineNo + 1}: a line over ${MAX_LINE_BYTES / 1024 / 1024} MB`);
      }
    }
  } finally {
    closeSync(fd);
  }
}
