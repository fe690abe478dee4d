import { StormlabError } from '../engine/errors.js';

/** No response headers within the header wait: a `timeout`, which falls over to the next target. */
export class HeadersTimeoutError extends StormlabError {
  constructor(ms: number) {
    super('ERR_STORMLAB_HEADERS_TIMEOUT', `no response headers within ${Math.round(ms)} ms`);
    // The name the classifier reads as a timeout (as for AbortSignal.timeout()).
    this.name = 'TimeoutError';
  }
}
