import type { TrafficConfig } from '../../traffic/config.js';
import { resolveEngine } from '../../traffic/engine-guard.js';
import type { UpstreamConfig } from '../../upstream/config.js';

/**
 * Why a live run of `scenario` (the harness's own driver, no gateway) cannot run as the
 * simulator runs it, or undefined: a streamed engine layer that would resume broken streams
 * (`stream.resume` on, a model of its `models:` declaring `continuation: prefill`) — the live
 * driver sends no prefill, so its figures would not be the simulated engine's.
 */
export function liveResumeProblem(
  scenario: { traffic: TrafficConfig; upstream: UpstreamConfig },
  variant: string,
): string | undefined {
  const declaring = new Set(scenario.upstream.models.filter((m) => m.continuation === 'prefill').map((m) => m.name));
  if (declaring.size === 0) return undefined;
  const t = scenario.traffic;
  const i = t.layers.findIndex(
    (l) =>
      l.stream === true &&
      l.retry.policy === 'engine' &&
      (l.models ?? []).some((m) => declaring.has(m)) &&
      resolveEngine(t.engine, l.retry.engine).stream.resume,
  );
  if (i < 0) return undefined;
  return `--mode live: variant ${variant}: layers[${i}] would resume broken streams on a model declaring continuation: prefill, which the live driver does not do (it sends no prefill; the simulator and guardedFetch do): set engine.stream.resume=false or drop the declaration to run it live`;
}
