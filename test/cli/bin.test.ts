import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { tempDir } from './capture-io.js';

// dist/ is built (when missing or stale) by test/global-setup.ts before any test runs.
const BIN = fileURLToPath(new URL('../../bin/stormlab.js', import.meta.url));

function stormlab(args: string[], cwd: string) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
    timeout: 60_000,
  });
  if (r.error !== undefined) throw r.error;
  return r;
}

describe('bin/stormlab.js, end to end', () => {
  beforeAll(() => {
    const error = inject('distBuildError');
    if (error !== '') throw new Error(error);
  });

  it('runs the bundled retry-storm quietly: the headline, exit 0', () => {
    const r = stormlab(['run', 'retry-storm', '-q'], tempDir());
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^amplification 27\.0× · goodput 0\.00\/s · success 0\.0 %\n$/);
    expect(r.status).toBe(0);
  });

  it('a bundled scenario run as written loads neither the YAML parser nor zod; with a --set it does', () => {
    // A module hook that refuses to resolve either: loading one is then an internal error.
    const dir = tempDir({
      'refuse.mjs': `import { register } from 'node:module';\nregister('data:text/javascript,' + encodeURIComponent(\`export async function resolve(s, c, n) { if (s === 'yaml' || s === 'zod' || s.startsWith('zod/')) throw new Error('loaded ' + s); return n(s, c); }\`));\n`,
    });
    const run = (args: string[]) =>
      spawnSync(process.execPath, ['--import', join(dir, 'refuse.mjs'), BIN, ...args], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, NO_COLOR: '1' },
        timeout: 60_000,
      });
    for (const args of [
      ['run', 'retry-storm'],
      ['compare', 'retry-storm'],
      ['run', 'retry-storm', '--variant', 'engine'],
    ]) {
      const r = run([...args, '-q']);
      expect(r.stderr, args.join(' ')).toBe('');
      expect(r.status).toBe(0);
    }
    // The same door, answered by the loader: the hook proves the test would see a load.
    const set = run(['run', 'retry-storm', '-q', '--seed', '2']);
    expect(set.status).toBe(70);
    expect(set.stderr).toMatch(/loaded (yaml|zod)/);
  });

  it('reports a bad scenario file in one line, exit 2, nothing on stdout', () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'bad.yaml'),
      'name: bad\nduration: 10s\narrival: { type: constant, rate: 5 }\ntokens: { prompt: 100, completion: 50 }\nlayers:\n  - { name: agent, fanout: -2 }\n  - { name: llm }\nupstream:\n  models: [{ name: primary, slots: 8, queue: 16, ttft: 100ms, tpot: 10ms }]\n',
    );
    const r = stormlab(['run', 'bad.yaml'], dir);
    expect(r.stderr).toBe('bad.yaml: layers[0].fanout: expected a positive integer, got -2\n');
    expect(r.stdout).toBe('');
    expect(r.status).toBe(2);
  });
});
