import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, inject, it } from 'vitest';

// dist/ is built (when missing or stale) by test/global-setup.ts before any test runs.
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  name: string;
  exports: Record<string, unknown>;
};

/** What each public door must offer, as users import it (the package by name, from dist/). */
const EXPECTED: Record<string, string[]> = {
  './engine': ['Guard', 'RetryBudget', 'AdaptiveThrottle', 'CircuitBreaker', 'Limiter', 'MemoryStore', 'systemClock'],
  './undici': ['stormlab', 'guardedFetch'],
  './redis': ['RedisStore', 'RedisIdempotencyStore'],
  './prometheus': ['guardMetrics', 'storeMetrics'],
  './fake-upstream': ['createFakeUpstream', 'DEFAULT_UPSTREAM', 'TOOL_POLICY_DEFAULTS', 'valueForSchema'],
};

describe('package exports', () => {
  beforeAll(() => {
    const error = inject('distBuildError');
    if (error !== '') throw new Error(error);
  });

  it('lists every door this test checks, and no other', () => {
    expect(
      Object.keys(pkg.exports)
        .filter((k) => k !== './package.json')
        .sort(),
    ).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const [door, names] of Object.entries(EXPECTED)) {
    it(`${pkg.name}/${door.slice(2)} loads from dist/ by name and exports ${names.join(', ')}`, () => {
      const code = `import(${JSON.stringify(`${pkg.name}/${door.slice(2)}`)}).then((m) => console.log(JSON.stringify(Object.keys(m))))`;
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(r.stderr).toBe('');
      expect(JSON.parse(r.stdout)).toEqual(expect.arrayContaining(names));
    });
  }
});
