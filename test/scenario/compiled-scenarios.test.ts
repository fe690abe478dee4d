import { copyFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUNDLED_DIR } from '../../src/scenario/bundled.js';
import {
  COMPILED_DIR,
  compiledScenario,
  fromCompiledJson,
  toCompiledJson,
  type CompiledScenario,
} from '../../src/scenario/compiled-scenarios.js';
import { resolveScenario } from '../../src/scenario/resolve-scenario.js';

/** A compiled folder and a bundled folder holding `name`, compiled as scripts/compile-scenarios.mjs does. */
function compiledFolders(name: string): { dir: string; bundled: string } {
  const root = mkdtempSync(join(tmpdir(), 'stormlab-compiled-'));
  const record: CompiledScenario = {
    text: readFileSync(join(BUNDLED_DIR, `${name}.yaml`), 'utf8'),
    asWritten: resolveScenario({ arg: name, cwd: process.cwd(), checkFile: true }).runs[0],
    variants: resolveScenario({ arg: name, cwd: process.cwd(), variants: 'all' }).runs,
  };
  writeFileSync(join(root, `${name}.json`), toCompiledJson(record));
  copyFileSync(join(BUNDLED_DIR, `${name}.yaml`), join(root, `${name}.yaml`));
  return { dir: root, bundled: root };
}

describe('compiled bundled scenarios', () => {
  it('give the scenario and its variants exactly as resolving the file does', () => {
    for (const name of ['retry-storm', 'brownout', 'stream-faults']) {
      const { dir, bundled } = compiledFolders(name);
      const compiled = compiledScenario(name, dir, bundled);
      const asWritten = resolveScenario({ arg: name, cwd: process.cwd() }).runs[0];
      expect(compiled?.asWritten, name).toEqual(asWritten);
      expect(compiled?.asWritten.scenario.traffic.deadlineMs).toBe(asWritten.scenario.traffic.deadlineMs); // Infinity survives JSON
      expect(compiled?.variants, name).toEqual(
        resolveScenario({ arg: name, cwd: process.cwd(), variants: 'all' }).runs,
      );
    }
  });

  it('are not used once the file changed since the build, nor for paths or unknown names', () => {
    const { dir, bundled } = compiledFolders('retry-storm');
    expect(compiledScenario('retry-storm', dir, bundled)).toBeDefined();
    expect(compiledScenario('brownout', dir, bundled)).toBeUndefined();
    expect(compiledScenario('./retry-storm.yaml', dir, bundled)).toBeUndefined();
    writeFileSync(
      join(bundled, 'retry-storm.yaml'),
      `${readFileSync(join(bundled, 'retry-storm.yaml'), 'utf8')}\n# edited\n`,
    );
    expect(compiledScenario('retry-storm', dir, bundled)).toBeUndefined();
  });

  it('write the numbers JSON cannot hold, and read them back', () => {
    const record = { text: 't', scenario: { a: Infinity, b: -Infinity, c: [1, Number.NaN] }, variants: {} };
    const back = fromCompiledJson(toCompiledJson(record as unknown as CompiledScenario)) as unknown;
    expect(back).toEqual(record);
  });

  it('are absent when running from source (nothing compiled there)', () => {
    expect(COMPILED_DIR).toContain(join('src', 'scenario'));
    expect(existsSync(COMPILED_DIR)).toBe(false);
  });
});
