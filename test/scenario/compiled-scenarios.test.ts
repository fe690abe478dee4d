import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUNDLED_DIR } from '../../src/scenario/bundled.js';
import {
  COMPILED_DIR,
  compiledScenario,
  compiledVariant,
  fromCompiledJson,
  toCompiledJson,
  type CompiledScenario,
} from '../../src/scenario/compiled-scenarios.js';
import { loadScenarioArg } from '../../src/scenario/load-scenario-arg.js';
import { resolveVariant } from '../../src/scenario/variants.js';
import { readFileSync, existsSync } from 'node:fs';

/** A compiled folder and a bundled folder holding `name`, compiled as scripts/compile-scenarios.mjs does. */
function compiledFolders(name: string): { dir: string; bundled: string } {
  const root = mkdtempSync(join(tmpdir(), 'stormlab-compiled-'));
  const scenario = loadScenarioArg(name, [], process.cwd());
  const variants = Object.fromEntries(scenario.variants.map((v) => [v.name, resolveVariant(scenario, v.name)]));
  const record: CompiledScenario = {
    text: readFileSync(join(BUNDLED_DIR, `${name}.yaml`), 'utf8'),
    scenario,
    variants,
  };
  writeFileSync(join(root, `${name}.json`), toCompiledJson(record));
  copyFileSync(join(BUNDLED_DIR, `${name}.yaml`), join(root, `${name}.yaml`));
  return { dir: root, bundled: root };
}

describe('compiled bundled scenarios', () => {
  it('give the scenario and its variants exactly as loading and validating the file does', () => {
    for (const name of ['retry-storm', 'brownout', 'stream-faults']) {
      const { dir, bundled } = compiledFolders(name);
      const loaded = loadScenarioArg(name, [], process.cwd());
      const compiled = compiledScenario(name, dir, bundled);
      expect(compiled, name).toEqual(loaded);
      expect(compiled?.traffic.deadlineMs).toBe(loaded.traffic.deadlineMs); // Infinity survives JSON
      for (const v of loaded.variants)
        expect(compiledVariant(compiled as NonNullable<typeof compiled>, v.name), v.name).toEqual(
          resolveVariant(loaded, v.name),
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

  it('know variants only of a scenario they gave', () => {
    const loaded = loadScenarioArg('retry-storm', [], process.cwd());
    expect(compiledVariant(loaded, loaded.variants[0].name)).toBeUndefined();
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
