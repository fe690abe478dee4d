import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { Io } from '../../src/cli/io.js';
import { createProgram } from '../../src/cli/program.js';

export interface CapturedIo extends Io {
  out: string;
  err: string;
  /** Files written through `writeFile`, by the path as given. */
  files: Map<string, string>;
}

export interface CaptureOptions {
  cwd?: string;
  /** `wallNow` starts at 1_000_000 and moves this much per call. @default 0 (a fixed clock) */
  wallStepMs?: number;
  /** Make every `writeFile` fail with this errno code, as `fs.writeFileSync` would. */
  writeError?: string;
  /** Paths `checkWritable` refuses, with the errno code it gives (the check before a run). */
  unwritable?: Record<string, string>;
  /** The environment the command sees. @default {} */
  env?: Record<string, string | undefined>;
}

/** An `Io` that records everything and touches nothing: no files, no real clock. */
export function captureIo(options: CaptureOptions = {}): CapturedIo {
  let wall = 1_000_000;
  const io: CapturedIo = {
    out: '',
    err: '',
    files: new Map(),
    stdout: (t) => void (io.out += t),
    stderr: (t) => void (io.err += t),
    writeFile: (path, data) => {
      if (options.writeError !== undefined) {
        throw Object.assign(new Error(`${options.writeError}: cannot write, open '${path}'`), {
          code: options.writeError,
        });
      }
      io.files.set(path, data);
    },
    checkWritable: (path) => options.unwritable?.[path],
    cwd: options.cwd ?? process.cwd(),
    env: options.env ?? {},
    isTTY: false,
    wallNow: () => {
      const now = wall;
      wall += options.wallStepMs ?? 0;
      return now;
    },
  };
  return io;
}

export interface CliRun {
  code: number;
  out: string;
  err: string;
  files: Map<string, string>;
}

/** Runs `stormlab <argv>` in-process with a captured io. */
export async function cli(argv: string[], options: CaptureOptions = {}): Promise<CliRun> {
  const io = captureIo(options);
  const code = await createProgram(io).run(argv);
  return { code, out: io.out, err: io.err, files: io.files };
}

/** A fresh temp dir holding `files` (name → text); returns its path. */
export function tempDir(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'stormlab-cli-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(resolve(dir, name), text);
  return dir;
}
