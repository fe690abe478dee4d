import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The one-way imports of ARCHITECTURE.md ("Layers and the one-way import rule"):
 *   engine ← platform ← integrations ← upstream ← traffic ← run ← fake-upstream ← proxy
 *          ← scenario ← report ← gate ← explore ← calibrate ← ui ← cli
 * A module may import from its own layer and the layers to its left, never to its right.
 * `entry` files are the package's public doors: they may import any layer except `cli`
 * (a library import must never load the command line).
 */
const ORDER = [
  'engine',
  'platform',
  'integrations',
  'upstream',
  'traffic',
  'run',
  'fake-upstream',
  'proxy',
  'scenario',
  'report',
  'gate',
  'explore',
  'calibrate',
  'ui',
  'cli',
];
/** Layers outside the order, with the layers they must not import. */
const DOORS: Record<string, string[]> = { entry: ['cli'] };
const SRC = resolve(__dirname, '../src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return files(full);
    return /\.(ts|tsx)$/.test(name) ? [full] : [];
  });
}

function layerOf(file: string): string {
  return relative(SRC, file).split(sep)[0];
}

function specifiers(source: string): string[] {
  const out: string[] = [];
  const re =
    /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s+['"]([^'"]+)['"]/gm;
  for (const m of source.matchAll(re)) out.push(m[1] ?? m[2] ?? m[3]);
  return out;
}

/** What is wrong with the relative imports of `file` (a path under src/), one line each. */
function importProblems(file: string, source: string): string[] {
  const from = file.split(/[\\/]/)[0];
  if (!ORDER.includes(from) && DOORS[from] === undefined) return [`${file}: unknown layer ${from}`];
  const bad: string[] = [];
  for (const spec of specifiers(source)) {
    if (!spec.startsWith('.')) continue;
    const to = layerOf(resolve(SRC, dirname(file), spec));
    const wrong =
      DOORS[from] !== undefined
        ? DOORS[from].includes(to)
        : !ORDER.includes(to) || ORDER.indexOf(to) > ORDER.indexOf(from);
    if (wrong) bad.push(`${file} imports ${spec} (${from} → ${to})`);
  }
  return bad;
}

describe('architecture', () => {
  const all = files(SRC);

  it('finds the source tree', () => {
    expect(all.some((f) => layerOf(f) === 'engine')).toBe(true);
  });

  it('keeps imports one-way', () => {
    const bad: string[] = [];
    for (const file of all) {
      for (const problem of importProblems(relative(SRC, file), readFileSync(file, 'utf8'))) bad.push(problem);
    }
    expect(bad).toEqual([]);
  });

  it('catches imports against the order, and an entry that loads the cli', () => {
    expect(importProblems('engine/a.ts', "import { x } from '../upstream/b.js';")).toHaveLength(1);
    expect(importProblems('upstream/a.ts', "import { x } from '../engine/b.js';")).toEqual([]);
    expect(importProblems('entry/engine.ts', "export * from '../cli/program.js';")).toHaveLength(1);
    expect(importProblems('entry/engine.ts', "export { Guard } from '../engine/guard.js';")).toEqual([]);
    expect(importProblems('run/a.ts', "import { x } from '../entry/engine.js';")).toHaveLength(1);
    expect(importProblems('stray/a.ts', '')).toHaveLength(1);
  });

  it('keeps the engine free of dependencies, the real clock and Math.random', () => {
    const bad: string[] = [];
    for (const file of all.filter((f) => layerOf(f) === 'engine' && !f.includes(`${sep}stores${sep}`))) {
      const source = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
      for (const spec of specifiers(source))
        if (!spec.startsWith('.')) bad.push(`${relative(SRC, file)} imports ${spec}`);
      for (const word of ['Date.now', 'performance.now', 'setTimeout', 'setInterval', 'Math.random', 'process.']) {
        if (source.includes(word)) bad.push(`${relative(SRC, file)} uses ${word}`);
      }
    }
    expect(bad).toEqual([]);
  });
});
