import type { CommitPolicy } from '../engine/engine-profiles.js';

/**
 * The engine's stream guard limits as the simulator applies them to a streamed engine layer:
 * an attempt with no first token within `firstTokenMs` of its start, or with no event for
 * `idleMs` once streaming, is abandoned as a stream error (and retried or failed over). The
 * layer's `timeout` and the call's deadline still bound the whole attempt. Their defaults are
 * the engine profile's (`ENGINE_PROFILES`, `resolveEngine`), as `guardedFetch` ships them.
 */
export interface StreamLimits {
  /**
   * When the caller gets the stream (the engine profile's `stream.commit`, as `guardedFetch`
   * ships it): `first-token` hands it over at its first token, so a cut or stall after that
   * ends the caller's answer with an error (not retried); `complete` holds it whole, so any
   * break is retried.
   */
  commit: CommitPolicy;
  /**
   * After commit, a cut or stall is continued on a model that declares `continuation: prefill`
   * (the same model first, then the next of `models:` that does): the rest of the answer is asked
   * for with the delivered tokens as a prefill (the engine profile's `stream.resume`).
   */
  resume: boolean;
  firstTokenMs: number;
  idleMs: number;
  /**
   * The wait for a stream's response headers. The simulated upstream, like the fake one,
   * sends a stream's headers with its first token, so this bounds the first token too.
   */
  headersMs: number;
}
