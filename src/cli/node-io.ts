import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Io } from './io.js';

/** The real process's io. */
export function nodeIo(): Io {
  return {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    writeFile: (path, data) => writeFileSync(resolve(process.cwd(), path), data),
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
