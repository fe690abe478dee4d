import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { sweepCommand } from '../../src/cli/commands/sweep.js';
import { UsageError } from '../../src/cli/io.js';
import type { RunPointsFn } from '../../src/explore/run-points.js';
import { flakyScenario } from '../explore/flaky-scenario.js';
import { captureIo, cli, tempDir } from './capture-io.js';

// dist/ is built (when missing or stale) by test/global-setup.ts before any test runs.
const BIN = fileURLToPath(new URL('../../bin/stormlab.js', import.meta.url));

let dir: string;
beforeAll(() => {
  const error = inject('distBuildError');
  if (error !== '') throw new Error(error);
  dir = tempDir({ 'flaky.yaml': flakyScenario() });
  mkdirSync(join(dir, 'out.json'));
  writeFileSync(join(dir, 'plain'), 'a file, not a directory\n');
});

function stormlab(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
    timeout: 60_000,
  });
  if (r.error !== undefined) throw r.error;
  return r;
}

const SWEEP = ['sweep', 'flaky.yaml', '--workers', '1', '--param', 'engine.retryBudget.ratio=0.05,0.3'];
const TUNE = ['tune', 'flaky.yaml', '--workers', '1', '--maximize', 'goodput', '--params', 'engine.throttle.k'];

/** Each bad output path, and the one line it gets. */
const BAD: Array<[path: string, why: string]> = [
  ['missing/dir/x.json', 'its directory does not exist'],
  ['out.json', 'it is a directory'],
  ['plain/x.json', 'a part of its path is not a directory'],
];

describe('sweep and tune check --json/--csv paths before any point runs', () => {
  it('sweep: the run function is never called when a path cannot be written', async () => {
    let calls = 0;
    const run: RunPointsFn = async () => {
      calls++;
      throw new Error('no point should run');
    };
    for (const flag of ['--json', '--csv'] as const) {
      const io = captureIo({ cwd: dir, unwritable: { 'nowhere/x': 'ENOENT' } });
      await expect(
        sweepCommand(
          io,
          'flaky.yaml',
          {
            param: ['engine.retryBudget.ratio=0.05,0.3'],
            workers: '1',
            [flag === '--json' ? 'json' : 'csv']: 'nowhere/x',
          },
          run,
        ),
      ).rejects.toThrow(new UsageError(`${flag}: cannot write nowhere/x: its directory does not exist`));
      expect(io.out).toBe('');
    }
    expect(calls).toBe(0);
  });

  it('end to end: one line, exit 2, nothing printed or written, for each bad path', () => {
    for (const [path, why] of BAD) {
      for (const [argv, flag] of [
        [[...SWEEP, '--json', path, '--csv', 'good.csv'], '--json'],
        [[...SWEEP, '--json', 'good.json', '--csv', path], '--csv'],
        [[...TUNE, '--json', path], '--json'],
      ] as const) {
        const r = stormlab([...argv]);
        expect(r.stderr, argv.join(' ')).toBe(`stormlab: ${flag}: cannot write ${path}: ${why}\n`);
        expect(r.status).toBe(2);
        // Not the best point, not a round: nothing ran.
        expect(r.stdout).toBe('');
        expect(existsSync(join(dir, 'good.json'))).toBe(false);
        expect(existsSync(join(dir, 'good.csv'))).toBe(false);
      }
    }
  });
});

describe('sweep and tune with an output to stdout (-): stdout is that file alone', () => {
  it('sweep --json -: stdout parses as the sweep file, the table goes to stderr; --csv - the same', async () => {
    const json = await cli([...SWEEP, '--json', '-'], { cwd: dir });
    expect(json.code, json.err).toBe(0);
    expect(JSON.parse(json.out).schema).toBe('stormlab.sweep/v1');
    expect(json.err).toContain('sweep of engine.retryBudget.ratio');
    expect(json.err).not.toContain('wrote -');
    const csv = await cli([...SWEEP, '--csv', '-'], { cwd: dir });
    expect(csv.code, csv.err).toBe(0);
    expect(csv.out.split('\n')[0]).toMatch(/^engine\.retryBudget\.ratio,/);
    expect(csv.out).not.toContain('sweep of');
  });

  it('tune --json -: stdout parses as the tune file, the report goes to stderr', async () => {
    const r = await cli([...TUNE, '--budget', '3', '--json', '-'], { cwd: dir });
    expect([0, 1], r.err).toContain(r.code);
    expect(JSON.parse(r.out).schema).toBe('stormlab.tune/v1');
    expect(r.err).not.toContain('wrote -');
  });
});
