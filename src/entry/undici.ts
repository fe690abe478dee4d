/**
 * `stormlab/undici`: the engine in front of real HTTP clients. `stormlab(options)` is an undici
 * interceptor (`new Agent().compose(stormlab({...}))`); `guardedFetch(options)` is a `fetch`
 * for SDKs that take one (`new OpenAI({ fetch: guardedFetch({...}), maxRetries: 0 })`).
 */
export { stormlab, type StormlabInterceptor } from '../integrations/undici-interceptor.js';
export {
  guardedFetch,
  type GuardedFetch,
  type GuardedFetchOptions,
  type StreamCounts,
} from '../integrations/guarded-fetch.js';
export type { EngineHttpOptions, HttpRequestInfo, StreamGuardOptions } from '../integrations/engine-http-options.js';
export type { HttpRequest, HttpTarget, HttpTargetSpec } from '../integrations/target-request.js';
export type { CommitPolicy } from '../integrations/stream-gate.js';
export { HTTP_DEFAULTS } from '../integrations/http-defaults.js';
export { estimateRequestTokens } from '../integrations/request-estimate.js';
export { SseUsage, usageOf } from '../integrations/response-usage.js';
export { ShedError, StreamError } from '../engine/errors.js';
