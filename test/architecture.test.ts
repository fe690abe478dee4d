import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * DESIGN.md's one-way imports:
 *   engine ← upstream ← traffic ← run ← scenario ← report ← ui ← cli
 * `gate` (expectations judged on results) and `explore` (sweeps and the tuner, which judge runs
 * by those expectations) sit right of report: they use its formats and fill in its types
 * (`Check`, `SweepFile`), which report renders.
 * A module may import from its own layer and the layers to its left, never to its right.
 * `platform` (real clock, OS randomness) sits just right of engine, and `integrations` (the
 * engine in front of undici and fetch) right of platform; `entry` files are the
 * package's public doors and may import anything but cli.
 */
const ORDER = [
  'engine',
  'platform',
  'integrations',
  'upstream',
  'traffic',
  'run',
  'fake-upstream',
  'scenario',
  'report',
  'gate',
  'explore',
  'ui',
  'cli',
  'entry',
];
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

describe('architecture', () => {
  const all = files(SRC);

  it('finds the source tree', () => {
    expect(all.some((f) => layerOf(f) === 'engine')).toBe(true);
  });

  it('keeps imports one-way', () => {
    const bad: string[] = [];
    for (const file of all) {
      const from = layerOf(file);
      if (!ORDER.includes(from)) bad.push(`${relative(SRC, file)}: unknown layer ${from}`);
      for (const spec of specifiers(readFileSync(file, 'utf8'))) {
        if (!spec.startsWith('.')) continue;
        const to = layerOf(resolve(dirname(file), spec));
        if (ORDER.indexOf(to) > ORDER.indexOf(from))
          bad.push(`${relative(SRC, file)} imports ${spec} (${from} → ${to})`);
      }
    }
    expect(bad).toEqual([]);
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
