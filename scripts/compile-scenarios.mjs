// Resolves every bundled scenario (as written, and each of its variants) once, at build time,
// exactly as a command with no overrides would, and writes what came out to
// dist/scenario/compiled/<name>.json with the text it came from,
// so that `stormlab run <bundled name>` starts without the YAML parser and the schema (see
// src/scenario/compiled-scenarios.ts). A scenario whose result would not survive JSON as it is
// (a value JSON cannot hold, besides the infinities it encodes) is left out and loads the ordinary way.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist', 'scenario');
const { listBundledScenarios } = await import(join(dist, 'bundled.js'));
const { resolveScenario } = await import(join(dist, 'resolve-scenario.js'));
const { COMPILED_DIR, fromCompiledJson, toCompiledJson } = await import(join(dist, 'compiled-scenarios.js'));

const out = COMPILED_DIR;
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const skipped = [];
for (const b of listBundledScenarios()) {
  if (!b.file.endsWith('.yaml')) continue;
  const asWritten = resolveScenario({ arg: b.name, cwd: root, checkFile: true }).runs[0];
  const { runs: variants } = resolveScenario({ arg: b.name, cwd: root, variants: 'all' });
  const record = { text: readFileSync(b.file, 'utf8'), asWritten, variants };
  const json = toCompiledJson(record);
  if (!isDeepStrictEqual(fromCompiledJson(json), record)) {
    skipped.push(b.name);
    continue;
  }
  writeFileSync(join(out, `${b.name}.json`), json);
}
if (skipped.length > 0) console.log(`compile-scenarios: left out (not plain JSON): ${skipped.join(', ')}`);
