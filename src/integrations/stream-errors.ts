import { StormlabError } from '../engine/errors.js';

/** A stream that ended (closed, reset, or an unfinished event) before its terminal signal. */
export class StreamCutError extends StormlabError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_STORMLAB_STREAM_CUT', message, options);
  }
}

/** A stream whose first content token, or whose next event, did not come in time. */
export class StreamStallError extends StormlabError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_STORMLAB_STREAM_STALL', message, options);
  }
}

/** No response headers within the header wait: a `timeout`, which falls over to the next target. */
export class HeadersTimeoutError extends StormlabError {
  constructor(ms: number) {
    super('ERR_STORMLAB_HEADERS_TIMEOUT', `no response headers within ${Math.round(ms)} ms`);
    // The name the classifier reads as a timeout (as for AbortSignal.timeout()).
    this.name = 'TimeoutError';
  }
}
