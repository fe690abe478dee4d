import { loadScenario } from './src/scenario/load-scenario.js';
import { listBundledScenarios } from './src/scenario/bundled.js';
import { resolveVariant } from './src/scenario/variants.js';
for (const b of listBundledScenarios()) {
  try { const s = loadScenario(b.file); console.log(b.name, '|', b.description, '|', s.variants.map(v => v.name).join(',')); for (const v of s.variants) resolveVariant(s, v.name); } catch (e) { console.log((e as Error).message); }
}
const s = loadScenario('brownout', { set: ['upstream.faults[0].rate=0.5'] }); console.log(s.upstream.faults[0]);
const t = loadScenario('tpm-burst', { set: ['tokens.prompt.weights=[0.8, 0.2]'] }); console.log(t.traffic.tokens.prompt, JSON.stringify(resolveVariant(t, 'rps+tpm').traffic.layers[1]));
