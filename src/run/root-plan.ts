import { SeededRandom } from '../engine/random.js';
import { Arrivals } from '../traffic/arrivals.js';
import { rootFilter, type RootShare } from '../traffic/root-share.js';
import type { RunSpec } from './run-spec.js';
import { EventHeap } from './sim/event-heap.js';

/**
 * What a share of a run was meant to drive, known before it starts: the root arrivals it
 * would start (open loop: their number and the first and last intended start, ms), or the
 * closed-loop users it holds (their tasks depend on the answers, so only the users are known).
 */
export interface PlannedShare {
  index: number;
  of: number;
  /** Root tasks the share was to start (open loop); null for closed-loop users. */
  roots: number | null;
  firstMs: number | null;
  lastMs: number | null;
  /** Closed loop: the users (by number, from 0) that are this share's. */
  users?: number[];
}

/** The share's plan, drawn from the same arrivals and seed as the run (on a virtual clock, nothing else runs). */
export function planShare(spec: RunSpec, share: RootShare): PlannedShare {
  const cfg = spec.traffic.arrival;
  if (cfg.type === 'closed') {
    const mine = rootFilter(spec.seed, share);
    const users = Array.from({ length: cfg.users }, (_, u) => u).filter((u) => mine?.(u) ?? true);
    return { ...share, roots: null, firstMs: null, lastMs: null, users };
  }
  const heap = new EventHeap();
  let roots = 0;
  let firstMs: number | null = null;
  let lastMs: number | null = null;
  const arrivals = new Arrivals(
    cfg,
    spec.durationMs,
    heap,
    (intended) => {
      roots++;
      firstMs ??= intended;
      lastMs = intended;
    },
    new SeededRandom(spec.seed),
    0,
    rootFilter(spec.seed, share),
  );
  arrivals.begin();
  heap.runUntil(spec.durationMs);
  const ms = (x: number | null): number | null => (x === null ? null : Math.round(x));
  return { ...share, roots, firstMs: ms(firstMs), lastMs: ms(lastMs) };
}
