import { BUNDLED_DIR, listBundledScenarios } from '../../scenario/bundled.js';
import { EXIT, type Io } from '../io.js';

/** `stormlab scenarios`: the bundled scenarios, one line each. */
export function scenariosCommand(io: Io): number {
  const list = listBundledScenarios(BUNDLED_DIR);
  const width = Math.max(...list.map((s) => s.name.length));
  for (const s of list) io.stdout(`${s.name.padEnd(width)}  ${s.description}\n`);
  io.stdout(`\nrun one: npx stormlab run scenarios/${list[0]?.name ?? 'retry-storm'}.yaml   compare: npx stormlab compare ${list[0]?.name ?? 'retry-storm'}\n`);
  return EXIT.ok;
}
