import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { tempDir } from './capture-io.js';

// dist/ is built (when missing or stale) by test/global-setup.ts before any test runs.
const BIN = fileURLToPath(new URL('../../bin/stormlab.js', import.meta.url));

/** Starts a live run of the real binary, sends `signal` once its first progress line is out. */
function stopAfterFirstLine(signal: NodeJS.Signals, dir: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [BIN, 'run', 'retry-storm', '--mode', 'live', '--duration', '20s', '--no-ui', '--json', 'out.json'],
      { cwd: dir, env: { ...process.env, NO_COLOR: '1' } },
    );
    let stderr = '';
    let sent = false;
    child.stderr.on('data', (d: Buffer) => {
      stderr += String(d);
      if (!sent && stderr.includes('\n')) {
        sent = true;
        child.kill(signal);
      }
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('bin/stormlab.js stopped by a signal (real process, real clock)', () => {
  beforeAll(() => {
    const error = inject('distBuildError');
    if (error !== '') throw new Error(error);
  });

  for (const [signal, code] of [
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const) {
    it(`${signal}: exit ${code}, the partial result written and marked partial`, async () => {
      const dir = tempDir();
      const r = await stopAfterFirstLine(signal, dir);
      expect(r.stderr).toMatch(/the result below is partial/);
      expect(r.code).toBe(code);
      const json = JSON.parse(readFileSync(join(dir, 'out.json'), 'utf8'));
      expect(json.partial).toBe(true);
      expect(json.variants[0].roots.offered).toBeGreaterThan(0);
    }, 30_000);
  }
});
