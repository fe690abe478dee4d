/**
 * `stormlab/undici`: the engine in front of real HTTP clients. `stormlab(options)` is an undici
 * interceptor (`new Agent().compose(stormlab({...}))`); `guardedFetch(options)` is a `fetch`
 * for SDKs that take one (`new OpenAI({ fetch: guardedFetch({...}), maxRetries: 0 })`).
 */
export { stormlab, type StormlabInterceptor } from '../integrations/undici-interceptor.js';
export { guardedFetch, type GuardedFetch, type GuardedFetchOptions } from '../integrations/guarded-fetch.js';
export type { EngineHttpOptions, HttpRequestInfo } from '../integrations/engine-http-options.js';
export { estimateRequestTokens } from '../integrations/request-estimate.js';
export { SseUsage, usageOf } from '../integrations/response-usage.js';
export { ShedError } from '../engine/errors.js';
