import { execFile } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../cli/capture-io.js';
import { fixtureLines, type Truth } from './otlp-fixture.js';

const BIN = fileURLToPath(new URL('../../bin/stormlab.js', import.meta.url));
/** The old generation the CLI gets: a run whose memory grew with the spans would not fit. */
const OLD_SPACE_MB = 64;

describe('calibrate streams a million spans in bounded memory', () => {
  const dir = tempDir();
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it(`reads and fits 952,486 spans (423 MB of JSON Lines) with the CLI's old generation capped at ${OLD_SPACE_MB} MB`, async () => {
    const file = join(dir, 'traces.jsonl');
    const truth: Truth = { roots: 0, agentCalls: 0, modelCalls: 0, attempts: 0, toolCalls: 0 };
    const fd = openSync(file, 'w');
    for (const line of fixtureLines(
      { roots: 50_000, rate: 20, failRate: 0.3, failFrom: 60_000, failTo: 120_000 },
      truth,
    ))
      writeSync(fd, `${line}\n`);
    closeSync(fd);
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [
        `--max-old-space-size=${OLD_SPACE_MB}`,
        BIN,
        'calibrate',
        'traces.jsonl',
        '-o',
        'out.yaml',
        '--report',
        'r.json',
      ],
      { cwd: dir, maxBuffer: 1 << 20 },
    );
    expect(stderr).not.toMatch(/heap|out of memory|\n\s+at /i);
    expect(stdout).toMatch(/^952486 spans \(\d+ GenAI\) in 50000 traces, 50000 root tasks/);
    expect(readFileSync(join(dir, 'out.yaml'), 'utf8')).toMatch(/^# 952486 spans /m);
    const report = JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8'));
    expect(report.roots.observed).toBe(truth.roots);
  }, 300_000);
});
