import { BUNDLED_DIR, bundledDescription, listBundledScenarios } from '../../scenario/bundled.js';
import { EXIT, type Io } from '../io.js';

/** `stormlab scenarios`: the bundled scenarios, one line each. */
export function scenariosCommand(io: Io): number {
  const list = listBundledScenarios(BUNDLED_DIR);
  const width = Math.max(...list.map((s) => s.name.length));
  for (const s of list) io.stdout(`${s.name.padEnd(width)}  ${bundledDescription(s.file)}\n`);
  // Bare names: they work from any directory, where a scenarios/ path would not.
  const example = list.find((s) => s.name === 'retry-storm')?.name ?? list[0]?.name ?? 'retry-storm';
  io.stdout(`\nrun one: npx stormlab run ${example}   compare: npx stormlab compare ${example}\n`);
  return EXIT.ok;
}
