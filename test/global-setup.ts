import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Why building `dist/` failed (tsc's output), or '' when it is fresh. */
    distBuildError: string;
  }
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Written by every build (tsc rewrites all its outputs), so its time is the build's. */
const STAMP = join(ROOT, 'dist', 'cli', 'main.js');
const INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];

function newestMtime(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(st.mtimeMs, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

/** Whether `dist/` is missing or older than anything it is built from. */
function distIsStale(): boolean {
  if (!existsSync(STAMP)) return true;
  const built = statSync(STAMP).mtimeMs;
  return INPUTS.some((p) => newestMtime(join(ROOT, p)) > built);
}

/** Runs `npx tsc -p tsconfig.build.json`; returns '' or what went wrong, with tsc's output. */
function build(): string {
  const r = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], {
    cwd: ROOT,
    encoding: 'utf8',
    shell: process.platform === 'win32',
  });
  if (r.error === undefined && r.status === 0) return '';
  // tsc emits despite type errors: date the stamp back so the next run builds again.
  if (existsSync(STAMP)) utimesSync(STAMP, 0, 0);
  const why = r.error?.message ?? `exit code ${r.status}${r.signal ? `, signal ${r.signal}` : ''}`;
  return `building dist/ (npx tsc -p tsconfig.build.json) failed: ${why}\n${r.stdout ?? ''}${r.stderr ?? ''}`;
}

/**
 * Vitest global setup: builds `dist/` (what `bin/stormlab.js` runs) once per test run when it
 * is missing or older than `src/`, so the end-to-end test runs the code under test. A failed
 * build is printed here and handed to the end-to-end tests, which fail with it; the other
 * tests, which import the source, still run (the typecheck reports type errors on its own).
 */
export default function setup(project: TestProject): void {
  const error = distIsStale() ? build() : '';
  if (error !== '') console.error(`\n[global setup] ${error}`);
  project.provide('distBuildError', error);
}
