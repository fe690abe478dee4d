import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Bench children compiled to plain JavaScript (esbuild, which tsx brings along), so that they
 * run as `stormlab` runs from dist/: without tsx's loader, which costs every process some
 * 35 MB of RSS and a worker thread. Dependencies stay in node_modules (the output sits under
 * it, so they resolve). `entries` maps an output name to its source; the answer maps each name
 * to the compiled `.mjs` to run with `node`.
 */
export async function compileChildren<K extends string>(entries: Record<K, string>): Promise<Record<K, string>> {
  const { build } = await import('esbuild');
  // One directory per checkout: worktrees that share a node_modules must not build over each other.
  const tag = createHash('sha1').update(ROOT).digest('hex').slice(0, 8);
  const outdir = join(ROOT, 'node_modules', '.cache', `stormlab-bench-${tag}`);
  await build({
    entryPoints: entries,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outdir,
    outExtension: { '.js': '.mjs' },
    logLevel: 'warning',
  });
  const out = {} as Record<K, string>;
  for (const name of Object.keys(entries) as K[]) out[name] = join(outdir, `${name}.mjs`);
  return out;
}
