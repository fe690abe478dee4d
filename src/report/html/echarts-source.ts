import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

let cached: string | undefined;

/**
 * The minified ECharts build, to inline into a report so it opens offline. Read from the
 * installed package at run time (it is a runtime dependency), once per process.
 */
export function echartsSource(): string {
  if (cached === undefined) {
    const path = createRequire(import.meta.url).resolve('echarts/dist/echarts.min.js');
    // `</script` would end the inline script early; inside the library's strings `<\/` means the same.
    cached = readFileSync(path, 'utf8').replace(/<\/(script)/gi, '<\\/$1');
  }
  return cached;
}
