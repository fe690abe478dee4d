import { classify, type Classification } from '../engine/classify.js';
import { EventFlag, StreamDecision, StreamGuard, STREAM_DECISION_NAMES } from '../engine/stream-guard.js';
import type { StreamLimits } from './stream-limits.js';

/**
 * What the engine's `StreamGuard` decides for each way a simulated stream can end, and when
 * its limits run out: the simulated upstream sends a stream's headers with its first token and
 * then either its tokens and end, a cut (the body ends early) or a stall (nothing for a while),
 * so these few runs of the state machine are every verdict a simulated stream can get.
 */
export interface StreamVerdicts {
  /** When, from the attempt's start, the first limit runs out with nothing in (Infinity: none). */
  firstAt: number;
  /** Its verdict (the header wait's `timeout` or the first-token `stream_stall`); undefined when none runs. */
  nothing: Classification | undefined;
  /** The longest quiet after the first token before the idle limit runs out. */
  idleAfter: number;
  /** A stall after the first token (commit `first-token`: the caller's stream ends with an error). */
  stallAfterFirst: Classification;
  /** A stall the caller has nothing of (held: `complete`), abandoned and failed over. */
  stallBeforeFirst: Classification;
  /** A cut after the first token. */
  cutAfterFirst: Classification;
  /** A cut before it: retried. */
  cutBeforeFirst: Classification;
}

const NO_RETRY = { 'x-should-retry': 'false' };

/** Runs the engine's stream guard with `limits` over each way a simulated stream ends. */
export function streamVerdicts(limits: StreamLimits): StreamVerdicts {
  const waits = { headersMs: limits.headersMs, firstTokenMs: limits.firstTokenMs, idleMs: limits.idleMs };
  const make = (commit = limits.commit): StreamGuard => new StreamGuard({ waits, commit }, 0);
  /** A guard whose stream brought its headers and first token at 0. */
  const afterFirst = (commit = limits.commit): StreamGuard => {
    const g = make(commit);
    g.headers();
    g.bytes(0);
    g.event(EventFlag.Content, 0);
    g.endOfChunk();
    return g;
  };

  const idle = afterFirst();
  const idleAfter = idle.due();
  const stallAfterFirst = verdict(idle, idle.timer(idleAfter));
  const held = afterFirst('complete');
  const stallBeforeFirst = verdict(held, held.timer(held.due()));

  const none = make();
  const firstAt = none.due();
  const nothing = firstAt === Infinity ? undefined : verdict(none, none.timer(firstAt));

  const cutLate = afterFirst();
  const cutEarly = make();
  cutEarly.headers();
  return {
    firstAt,
    nothing,
    idleAfter,
    stallAfterFirst,
    stallBeforeFirst,
    cutAfterFirst: verdict(cutLate, cutLate.close()),
    cutBeforeFirst: verdict(cutEarly, cutEarly.close()),
  };
}

/** The engine's classification of a final decision, as the HTTP integrations report it. */
function verdict(g: StreamGuard, decision: number): Classification {
  switch (decision) {
    case StreamDecision.Retry:
    case StreamDecision.FailOver:
      return classify({ error: g.error, cancelled: false });
    case StreamDecision.EndWithError:
      // The caller has the bytes: no retry (`x-should-retry: false`), yet it counts against the upstream.
      return classify({ error: g.error, headers: NO_RETRY, cancelled: false });
    default:
      throw new Error(`stream guard: no simulated verdict for ${STREAM_DECISION_NAMES[decision]}`);
  }
}
