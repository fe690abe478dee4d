import { EventEmitter } from 'node:events';
import { accessSync, constants, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { EXIT, type Io } from './io.js';
import { writeWhole } from './write-whole.js';

/** How long cleanups may take after a crash before the process exits anyway. */
const CRASH_CLEANUP_MS = 10_000;
/** Exit code of an internal error (as `failure` gives it). */
const CRASH_EXIT = EXIT.internal;

/** The real process's io. */
export function nodeIo(): Io {
  const pipe = brokenPipes();
  const crashes = crashCleanups();
  return {
    stdout: (t) => void (pipe.closed.stdout || process.stdout.write(t)),
    stderr: (t) => void (pipe.closed.stderr || process.stderr.write(t)),
    writeFile: (path, data) => writeWhole(resolve(process.cwd(), path), data),
    checkWritable: (path) => writableProblem(resolve(process.cwd(), path)),
    cwd: process.cwd(),
    env: process.env,
    isTTY: process.stdout.isTTY === true,
    wallNow: () => Date.now(),
    terminal: process.stdout.isTTY ? { stdout: process.stdout, stdin: process.stdin } : undefined,
    onStop(fn) {
      const signals = ['SIGINT', 'SIGTERM'] as const;
      const off = (): void => {
        signals.forEach((s) => process.off(s, handler));
        pipe.events.off('broken', broken);
      };
      const handler = (signal: string): void => {
        off();
        fn(signal);
      };
      const broken = (): void => handler('SIGPIPE');
      signals.forEach((s) => process.once(s, handler));
      pipe.events.once('broken', broken);
      return off;
    },
    onCrash: crashes.add,
  };
}

/**
 * stdout and stderr as pipes whose reader may go away (`stormlab run … | head`): a write then
 * fails with EPIPE, and the stream says so in an 'error' event that would otherwise crash the
 * process. Each stream that failed is marked closed (what is written to it after is dropped)
 * and `broken` is emitted. A SIGPIPE sent to the process is heard the same way. Its
 * listener stays for the life of the process: removing the last one would give the signal
 * back its default action, and the next write to a closed pipe would kill the process unheard.
 */
function brokenPipes() {
  const events = new EventEmitter();
  const closed = { stdout: false, stderr: false };
  const tell = (): void => void events.emit('broken');
  process.stdout.on('error', () => {
    closed.stdout = true;
    tell();
  });
  process.stderr.on('error', () => {
    closed.stderr = true;
    tell();
  });
  process.on('SIGPIPE', tell);
  return { events, closed };
}

/**
 * Cleanups to run when the process dies of an error nothing caught. The process listens for
 * such errors only while a cleanup is registered: otherwise Node's own report stands.
 */
function crashCleanups() {
  const cleanups = new Set<() => Promise<unknown>>();
  let crashing = false;
  const crash = (err: unknown): void => {
    if (crashing) return;
    crashing = true;
    process.stderr.write(
      `stormlab: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    const bound = new Promise((done) => setTimeout(done, CRASH_CLEANUP_MS).unref());
    void Promise.race([Promise.allSettled([...cleanups].map((c) => c())), bound]).then(() => process.exit(CRASH_EXIT));
  };
  return {
    add(cleanup: () => Promise<unknown>): () => void {
      if (cleanups.size === 0) {
        process.on('uncaughtException', crash);
        process.on('unhandledRejection', crash);
      }
      cleanups.add(cleanup);
      return () => {
        if (!cleanups.delete(cleanup) || cleanups.size > 0) return;
        process.off('uncaughtException', crash);
        process.off('unhandledRejection', crash);
      };
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
