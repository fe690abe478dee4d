import { classOf, classifyStatus, type Classification } from '../engine/classify.js';
import { Detail } from '../upstream/response.js';
import { MID_STREAM as BROKEN, TIMEOUT } from './outcomes.js';

/**
 * How callers react to the stream faults of an upstream answer. A plain caller (`none`, `naive`,
 * `sdk`) reads a stream the way the official SDKs do: it ends when the body ends, so a stream
 * cut without its terminal event reads as a complete answer — a **truncated success** — and a
 * malformed event throws mid-stream. The engine reads it through its stream guard: a stream is
 * complete only with its terminal signal, a cut or a stall is a retryable stream error, a
 * malformed event is skipped. (A call that is not streamed gets a broken body for a cut or a
 * malformed event, which every caller sees as an error: `classifyUpstream`.)
 */

const OK = classifyStatus(200);

/**
 * The engine's error class for a stream it abandons, as its stream guard reports it: a stream
 * ended without its terminal event is `stream_cut` (retried, then failed over), no event for
 * `idleMs` is `stream_stall` and no first token within `firstTokenMs` a `timeout` — both of
 * which fail over at once when there is a next target (`onTimeout: 'fallback'`). All three
 * count as failures for the breaker. The one place the simulator maps stream faults onto the
 * engine's classification.
 */
export function engineStreamError(kind: 'cut' | 'stall' | 'first-token'): Classification {
  return kind === 'cut' ? classOf('stream_cut') : kind === 'stall' ? classOf('stream_stall') : TIMEOUT;
}

const ENGINE_CUT = engineStreamError('cut');

/**
 * The classification of an upstream 200 with `detail` for a streamed call, read by the engine
 * (`engine`) or a plain caller; undefined when `detail` is no stream fault (the usual
 * classification applies, `classifyUpstream`, which also covers calls not streamed).
 */
export function classifyStreamed(detail: number, engine: boolean): Classification | undefined {
  switch (detail) {
    case Detail.Cut:
      return engine ? ENGINE_CUT : OK;
    case Detail.Malformed:
      return engine ? OK : BROKEN;
    default:
      return undefined;
  }
}

/** Whether a streamed success with `detail` is a cut stream taken as complete. */
export function isTruncated(detail: number, engine: boolean): boolean {
  return detail === Detail.Cut && !engine;
}
