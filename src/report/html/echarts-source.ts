import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/**
 * Where the minified ECharts build is: beside this file in the package (the build copies it
 * there, see scripts/vendor-echarts.mjs, so an install needs no echarts package), else the
 * echarts devDependency when running from the source tree.
 */
function echartsPath(): string {
  const vendored = fileURLToPath(new URL('./echarts.min.js', import.meta.url));
  return existsSync(vendored) ? vendored : createRequire(import.meta.url).resolve('echarts/dist/echarts.min.js');
}

/** The minified ECharts build, to inline into a report so it opens offline; read once per process. */
export function echartsSource(): string {
  if (cached === undefined) {
    // `</script` would end the inline script early; inside the library's strings `<\/` means the same.
    cached = readFileSync(echartsPath(), 'utf8').replace(/<\/(script)/gi, '<\\/$1');
  }
  return cached;
}
