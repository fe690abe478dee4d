import type { MetricsCollectorOptions } from './metrics/collector.js';
import type { RunSpec } from './run-spec.js';

/**
 * The tools a run's metrics count, in the tool service's order, each with whether any call of
 * it has a side effect; whether its users resubmit; its tenants. Empty for a scenario with none
 * of them, so its result has no `tools`, `users` or `tenants` section.
 */
export function toolInfos(spec: RunSpec): Pick<MetricsCollectorOptions, 'tools' | 'users' | 'tenants' | 'inference'> {
  const tools = spec.upstream.tools ?? [];
  const calls = spec.traffic.layers.flatMap((l) => l.tools ?? []);
  return {
    ...(tools.length > 0
      ? {
          tools: tools.map((t) => ({
            name: t.name,
            sideEffect: calls.some((c) => c.tool === t.name && c.sideEffect),
          })),
        }
      : {}),
    ...(spec.traffic.users === undefined ? {} : { users: true }),
    ...(spec.traffic.tenants === undefined && spec.traffic.entry === undefined
      ? {}
      : { tenants: (spec.traffic.tenants ?? [{ name: 'default' }]).map((t) => t.name) }),
    ...(spec.traffic.layers.some((l) => l.inference !== undefined) ? { inference: true } : {}),
  };
}
