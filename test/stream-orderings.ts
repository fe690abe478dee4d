import type { CommitPolicy } from '../src/engine/engine-profiles.js';

/**
 * The limit orderings of the stream guard, as one table every path is tested against — the
 * engine's `StreamGuard` itself, the simulator's stream leaves, `guardedFetch` and the undici
 * interceptor — so that each gives the same verdict at the same time.
 *
 * The upstream's script, in ms from the attempt's start: `headersAt` (the response headers and
 * a role chunk, which is no content), `firstAt` (the first content token), then `endAt` (a
 * finish and the end marker) or `cutAt` (the body ends without them); anything left out never
 * comes (the connection stays open). The simulated upstream sends a stream's headers with its
 * first token, so every case's verdict holds whether the headers come at `headersAt` or with
 * the first token.
 */
export interface Ordering {
  name: string;
  waits: { headersMs: number; firstTokenMs: number; idleMs: number };
  commit: CommitPolicy;
  headersAt?: number;
  firstAt?: number;
  endAt?: number;
  cutAt?: number;
  /** The guard's decision, the engine class of its error, and when (ms from the start). */
  verdict: { decision: 'Complete' | 'Retry' | 'FailOver' | 'EndWithError'; error?: string; at: number };
}

const S = 1000;
const waits = (headersMs: number, firstTokenMs: number, idleMs: number) => ({
  headersMs: headersMs * S,
  firstTokenMs: firstTokenMs * S,
  idleMs: idleMs * S,
});

export const ORDERINGS: Ordering[] = [
  {
    name: 'the header wait first, nothing comes',
    waits: waits(1, 2, 3),
    commit: 'first-token',
    verdict: { decision: 'FailOver', error: 'timeout', at: 1 * S },
  },
  {
    name: 'the first-token limit before the header wait, nothing comes',
    waits: waits(2, 1, 3),
    commit: 'first-token',
    verdict: { decision: 'FailOver', error: 'stream_stall', at: 1 * S },
  },
  {
    name: 'headers at once, no token: the first-token limit, not the shorter idle gap',
    waits: waits(3, 2, 1),
    commit: 'first-token',
    headersAt: 0,
    verdict: { decision: 'FailOver', error: 'stream_stall', at: 2 * S },
  },
  {
    name: 'regression: firstToken 10 s, idle 1 s, first token at 3 s: no stall, complete',
    waits: waits(10, 10, 1),
    commit: 'first-token',
    headersAt: 0,
    firstAt: 3 * S,
    endAt: 3.5 * S,
    verdict: { decision: 'Complete', at: 3.5 * S },
  },
  {
    name: 'a first-token limit above the idle gap holds (a reasoning model)',
    waits: waits(10, 5, 1),
    commit: 'first-token',
    headersAt: 0,
    verdict: { decision: 'FailOver', error: 'stream_stall', at: 5 * S },
  },
  {
    name: 'a stall after the first token, commit first-token: the caller’s stream ends with an error',
    waits: waits(10, 10, 2),
    commit: 'first-token',
    headersAt: 0,
    firstAt: 0,
    verdict: { decision: 'EndWithError', error: 'stream_stall', at: 2 * S },
  },
  {
    name: 'a stall after the first token, commit complete: failed over',
    waits: waits(10, 10, 2),
    commit: 'complete',
    headersAt: 0,
    firstAt: 0,
    verdict: { decision: 'FailOver', error: 'stream_stall', at: 2 * S },
  },
  {
    name: 'a cut after the first token, commit first-token: the caller’s stream ends with an error',
    waits: waits(10, 10, 5),
    commit: 'first-token',
    headersAt: 0,
    firstAt: 0,
    cutAt: 1 * S,
    verdict: { decision: 'EndWithError', error: 'stream_cut', at: 1 * S },
  },
  {
    name: 'a cut after the first token, commit complete: retried',
    waits: waits(10, 10, 5),
    commit: 'complete',
    headersAt: 0,
    firstAt: 0,
    cutAt: 1 * S,
    verdict: { decision: 'Retry', error: 'stream_cut', at: 1 * S },
  },
];
