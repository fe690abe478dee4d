import { createRequire } from 'node:module';

type Yaml = typeof import('yaml');

let loaded: Yaml | undefined;

/**
 * The yaml package, loaded on first use (synchronously: it is CommonJS). A run of a bundled
 * scenario, a JSON file or a run without `--set` never parses YAML, so it does not pay for
 * loading the parser.
 */
export function yaml(): Yaml {
  loaded ??= createRequire(import.meta.url)('yaml') as Yaml;
  return loaded;
}
