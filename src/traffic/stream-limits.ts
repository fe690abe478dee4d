/**
 * The engine's stream guard limits as the simulator applies them to a streamed engine layer:
 * an attempt with no first token within `firstTokenMs` of its start, or with no event for
 * `idleMs` once streaming, is abandoned as a stream error (and retried or failed over). The
 * layer's `timeout` and the call's deadline still bound the whole attempt.
 */
export interface StreamLimits {
  firstTokenMs: number;
  idleMs: number;
}

/** No limit unless the scenario's `engine.stream` sets one: a cut is still an error to the engine. */
export const STREAM_LIMIT_DEFAULTS: Readonly<StreamLimits> = Object.freeze({
  firstTokenMs: Infinity,
  idleMs: Infinity,
});
