import { accessSync, constants, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Io } from './io.js';

/** The real process's io. */
export function nodeIo(): Io {
  return {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    writeFile: (path, data) => writeFileSync(resolve(process.cwd(), path), data),
    checkWritable: (path) => writableProblem(resolve(process.cwd(), path)),
    cwd: process.cwd(),
    env: process.env,
    isTTY: process.stdout.isTTY === true,
    wallNow: () => Date.now(),
    terminal: process.stdout.isTTY ? { stdout: process.stdout, stdin: process.stdin } : undefined,
    onStop(fn) {
      const signals = ['SIGINT', 'SIGTERM'] as const;
      const off = (): void => signals.forEach((s) => process.off(s, handler));
      const handler = (signal: string): void => {
        off();
        fn(signal);
      };
      signals.forEach((s) => process.once(s, handler));
      return off;
    },
  };
}

/** Why `file` could not be written (an errno code), or undefined: it, or else its directory, must be writable. */
function writableProblem(file: string): string | undefined {
  const code = (e: unknown): string => (e as NodeJS.ErrnoException).code ?? 'EIO';
  try {
    if (statSync(file).isDirectory()) return 'EISDIR';
    accessSync(file, constants.W_OK);
    return undefined;
  } catch (e) {
    if (code(e) !== 'ENOENT') return code(e);
  }
  try {
    if (!statSync(dirname(file)).isDirectory()) return 'ENOTDIR';
    accessSync(dirname(file), constants.W_OK);
    return undefined;
  } catch (e) {
    return code(e);
  }
}
