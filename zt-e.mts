import { loadScenario } from './src/scenario/load-scenario.js';
import { writeFileSync } from 'node:fs';
const cases: Array<[string, string]> = [
  ['/tmp/zt/e.yaml', ''],
  ['/tmp/zt/c.yaml', '# nothing\n'],
  ['/tmp/zt/s.yaml', 'name: x\nlayers:\n  - name: a\n    fanout: [1\n'],
  ['/tmp/zt/j.json', '{\n  "name": "x",\n}'],
  ['/tmp/zt/l.yaml', '- 1\n- 2\n'],
  ['/tmp/zt/m.yaml', 'name: x\n'],
  ['/tmp/zt/f.yaml', 'name: x\nvariants: { layers[*].retry: {policy: naive} }\n'],
  ['/tmp/zt/t.txt', 'name: x\n'],
];
for (const [f, t] of cases) { writeFileSync(f, t); try { loadScenario(f) } catch (e) { console.log((e as Error).message) } }
for (const a of ['/tmp/zt/nope.yaml', 'retry-stom', '/tmp/zt']) try { loadScenario(a) } catch (e) { console.log((e as Error).message) }
