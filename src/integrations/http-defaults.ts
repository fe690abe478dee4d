import { ENGINE_PROFILES } from '../engine/engine-profiles.js';

/**
 * What `guardedFetch` and the undici interceptor ship (README, "Timeouts" and "Breaker
 * defaults"): the `http` row of the engine's one profile table (`ENGINE_PROFILES`), under the
 * name `stormlab/undici` exports it by. Options a caller passes are merged over it.
 */
export const HTTP_DEFAULTS = ENGINE_PROFILES.http;
