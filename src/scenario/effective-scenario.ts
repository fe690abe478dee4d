import { compiledScenario, type CompiledScenario } from './compiled-scenarios.js';
import { pickVariants, type EffectiveScenarios, type ScenarioRequest } from './scenario-request.js';

/**
 * What a command runs, as the scenario layer resolves it (`resolveScenario`): the one door
 * from a command line to a scenario. A bundled scenario with no command-line overrides is
 * answered from what the build resolved, without loading the YAML parser or the schema; the
 * answer is the same either way, only the start-up differs.
 */
export async function effectiveScenarios(req: ScenarioRequest): Promise<EffectiveScenarios> {
  const compiled = (req.set ?? []).length === 0 ? compiledScenario(req.arg) : undefined;
  if (compiled !== undefined) return fromCompiled(compiled, req);
  const { resolveScenario } = await import('./resolve-scenario.js');
  return resolveScenario(req);
}

function fromCompiled(c: CompiledScenario, req: ScenarioRequest): EffectiveScenarios {
  const variants = c.variants.map((v) => v.name);
  const names = pickVariants(req.variants, variants, req.arg, req.flag);
  const runs = names.length === 0 ? [c.asWritten] : names.map((n) => c.variants[variants.indexOf(n)]);
  return { runs, variants };
}
