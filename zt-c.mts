import { loadScenario } from './src/scenario/load-scenario.js';
import { resolveVariant } from './src/scenario/variants.js';
const s = loadScenario('/tmp/zt/ex.yaml');
console.log(JSON.stringify({ ...s, document: undefined }, null, 1).slice(0, 3000));
console.log(JSON.stringify(resolveVariant(s, 'engine').traffic.layers));
for (const set of [['layers[1].fanout=-2', 'upstream.models[0].slots=many', 'arrival.type=uniform', 'duration=soon', 'layers[2].models[0]=gpt-5', 'layers[0].fan_out=2', 'foo', 'upstream.faults[3].rate=0.5', 'layers[x].a=1', 'tokens.prompt.dist=gauss', 'engine.breaker=3', 'engine.throttle.kk=3', 'upstream.faults[0].status={abc: 1}', 'layers[0].retry.policy=engin', 'upstream.models[0].name=', 'arrival.rate.x=1', 'layers[1].fanout={dist: choice, values: [1, 0.5]}', 'layers[1].fanout={dist: uniform, min: 3, max: 1}', 'variants.engine={x: 1}']]) {
  try { loadScenario('/tmp/zt/ex.yaml', { set }); } catch (e) { console.log((e as Error).message); }
}
