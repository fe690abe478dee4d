import { OptionError } from '../engine/errors.js';
import { durationRangeText, formatDuration } from './duration.js';
import { ManualClock } from '../engine/manual-clock.js';
import { SeededRandom } from '../engine/random.js';
import { engineGuard } from '../traffic/engine-guard.js';
import type { EngineConfig, LayerConfig } from '../traffic/config.js';

/**
 * Engine settings each valid alone but not together (a breaker's `openMs` above its
 * `maxOpenMs`, a backoff base above its cap, two limits of one name): the engine itself judges
 * them, by building each engine the run would build — the scenario's `engine:` defaults, and
 * every engine layer's and tool call's own overrides on top — on a throwaway clock. One line
 * per engine that refuses, with its path.
 */
export function engineProblems(engine: EngineConfig, layers: readonly LayerConfig[]): string[] {
  const problems: string[] = [];
  const check = (over: Partial<EngineConfig>, path: string): void => {
    try {
      engineGuard(engine, over, 'check', ['model'], new ManualClock(0), new SeededRandom(1));
    } catch (e) {
      if (!(e instanceof OptionError)) throw e;
      problems.push(`${path}: ${scenarioWording(e)}`);
    }
  };
  check({}, 'engine');
  layers.forEach((l, i) => {
    if (l.retry.policy === 'engine' && Object.keys(l.retry.engine).length > 0)
      check(l.retry.engine, `layers[${i}].retry.engine`);
    (l.tools ?? []).forEach((t, j) => {
      if (t.retry?.policy === 'engine' && Object.keys(t.retry.engine).length > 0)
        check(t.retry.engine, `layers[${i}].tools[${j}].retry.engine`);
    });
  });
  return [...problems, ...placementProblems(layers)];
}

/**
 * Engine options a layer (or tool call) sets where no call of it can read them: refused, one
 * line each, rather than run as if they were not there. A stream guard's limits need the
 * streamed model layer; the wait for a non-streamed answer's headers, the non-streamed one;
 * a tool call is neither streamed nor replicated. (The scenario's `engine:` block holds
 * defaults for whichever layers do read them.)
 */
function placementProblems(layers: readonly LayerConfig[]): string[] {
  const out: string[] = [];
  const last = layers.length - 1;
  layers.forEach((l, i) => {
    const at = `layers[${i}].retry.engine`;
    const e = l.retry.policy === 'engine' ? l.retry.engine : {};
    if (e.stream !== undefined && !(i === last && l.stream === true))
      out.push(
        `${at}.stream: only the streamed model layer (the last, with stream: true) guards streams; set it there or in engine.stream`,
      );
    if (e.headersTimeoutMs !== undefined && !(i === last && l.stream !== true))
      out.push(
        `${at}.headersTimeoutMs: only the model layer's non-streamed calls wait for an answer's headers (a streamed call's wait is stream.headers)`,
      );
    (l.tools ?? []).forEach((t, j) => {
      const te = t.retry?.policy === 'engine' ? t.retry.engine : {};
      for (const key of ['stream', 'headersTimeoutMs', 'state'] as const)
        if (te[key] !== undefined)
          out.push(`layers[${i}].tools[${j}].retry.engine.${key}: a tool call is neither streamed nor replicated`);
    });
  });
  return out;
}

/**
 * An engine option error in a scenario's words: the guard's own options (`guard.maxAttempts`)
 * are top-level keys of an `engine:` block; the rest (`breaker.maxOpenMs`) read the same. A
 * duration (an option in ms) is said as a scenario writes one: `breaker.maxOpenMs must be a
 * duration >= 40s, got 20s`, not in raw ms.
 */
export function scenarioWording(e: OptionError): string {
  if (e.option === undefined) return e.message;
  const name = e.option.startsWith('guard.') ? e.option.slice('guard.'.length) : e.option;
  if (e.range !== undefined && name.endsWith('Ms') && typeof e.value === 'number')
    return `${name} must be ${durationRangeText(e.range)}, got ${formatDuration(e.value)}`;
  return `${name} ${e.problem}`;
}
