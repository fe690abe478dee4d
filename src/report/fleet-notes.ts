import type { ResultNote, RunResult } from '../run/metrics/result.js';
import { usersText } from './fleet-lines.js';
import { formatCount } from './format.js';

/** A worker that started this much after the agreed instant is named (its roots due meanwhile left late). */
export const LATE_START_MS = 100;

/**
 * What a fleet run's figures need said: each share whose worker was lost (the figures leave
 * it out; its intended roots are named), each worker whose engines lost the shared state's
 * Redis for a while, and each worker that started late, with its lag.
 */
export function fleetNotes(variants: readonly RunResult[]): ResultNote[] {
  const notes: ResultNote[] = [];
  for (const v of variants)
    for (const w of v.live?.workers ?? []) {
      const who = w.worker ?? 'no worker';
      if (w.status === 'lost') {
        const intended =
          w.plannedRoots !== null
            ? `${formatCount(w.plannedRoots)} intended root tasks`
            : `closed-loop ${usersText(w.users ?? [])}`;
        notes.push({
          kind: 'lost-share',
          variant: v.name,
          share: w.share,
          of: w.of,
          worker: w.worker,
          plannedRoots: w.plannedRoots,
          ...(w.users === undefined ? {} : { users: w.users }),
          message: `${v.name}: share ${w.share + 1} of ${w.of} was lost (${who}): its ${intended} are not in these figures, which are what the other workers drove`,
        });
        continue;
      }
      if ((w.storeUnavailable ?? 0) > 0) {
        const n = w.storeUnavailable!;
        notes.push({
          kind: 'shared-state-lost',
          variant: v.name,
          share: w.share,
          worker: w.worker,
          times: n,
          message: `${v.name}: share ${w.share + 1} of ${w.of} (${who}) lost the shared engine state's Redis ${n === 1 ? 'once' : `${formatCount(n)} times`}: its engines decided on their own state until it was back, so the fleet's budgets and buckets were not one all along`,
        });
      }
      if (w.startLagMs > LATE_START_MS)
        notes.push({
          kind: 'late-worker',
          variant: v.name,
          share: w.share,
          worker: w.worker,
          startLagMs: w.startLagMs,
          message: `${v.name}: share ${w.share + 1} of ${w.of} (${who}) started ${formatCount(w.startLagMs)} ms after the agreed instant; its roots due meanwhile count from when they were due`,
        });
    }
  return notes;
}
