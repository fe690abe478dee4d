import { HTTP_DEFAULTS } from '../integrations/http-defaults.js';

/**
 * The engine's stream guard limits as the simulator applies them to a streamed engine layer:
 * an attempt with no first token within `firstTokenMs` of its start, or with no event for
 * `idleMs` once streaming, is abandoned as a stream error (and retried or failed over). The
 * layer's `timeout` and the call's deadline still bound the whole attempt.
 */
export interface StreamLimits {
  firstTokenMs: number;
  idleMs: number;
  /**
   * The wait for a stream's response headers. The simulated upstream, like the fake one,
   * sends a stream's headers with its first token, so this bounds the first token too.
   */
  headersMs: number;
}

/**
 * The HTTP integrations' defaults (`HTTP_DEFAULTS`, README "Timeouts"): a simulated engine
 * layer guards its streams as `guardedFetch` and the interceptor do unless the scenario's
 * `engine.stream` says otherwise.
 */
export const STREAM_LIMIT_DEFAULTS: Readonly<StreamLimits> = Object.freeze({
  firstTokenMs: HTTP_DEFAULTS.firstTokenMs,
  idleMs: HTTP_DEFAULTS.idleMs,
  headersMs: HTTP_DEFAULTS.streamHeadersTimeoutMs,
});
