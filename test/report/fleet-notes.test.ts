import { describe, expect, it } from 'vitest';
import { fleetNotes } from '../../src/report/fleet-notes.js';
import type { LiveWorker, RunResult } from '../../src/run/metrics/result.js';

const worker = (o: Partial<LiveWorker>): LiveWorker => ({
  share: 0,
  of: 3,
  worker: 'vm:100:0',
  status: 'reported',
  plannedRoots: 40,
  roots: 40,
  sent: 40,
  offsetMs: 0,
  startLagMs: 3,
  interrupted: false,
  ...o,
});

const result = (workers: LiveWorker[]) => ({ name: 'engine', live: { workers } }) as unknown as RunResult;

describe('fleetNotes', () => {
  it('names a lost share, a late worker, and a worker whose engines lost the shared state', () => {
    const notes = fleetNotes([
      result([
        worker({ status: 'lost', worker: null, storeUnavailable: 2, startLagMs: 900 }),
        worker({ share: 1, worker: 'vm:101:0', startLagMs: 850 }),
        worker({ share: 2, worker: 'vm:102:0', storeUnavailable: 1 }),
      ]),
    ]);
    expect(notes.map((n) => n.kind)).toEqual(['lost-share', 'late-worker', 'shared-state-lost']);
    expect(notes[0].message).toBe(
      'engine: share 1 of 3 was lost (no worker): its 40 intended root tasks are not in these figures, which are what the other workers drove',
    );
    expect(notes[1].message).toMatch(/^engine: share 2 of 3 \(vm:101:0\) started 850 ms after the agreed instant/);
    expect(notes[2]).toMatchObject({ kind: 'shared-state-lost', share: 2, worker: 'vm:102:0', times: 1 });
    expect(notes[2].message).toBe(
      "engine: share 3 of 3 (vm:102:0) lost the shared engine state's Redis once: its engines decided on their own state until it was back, so the fleet's budgets and buckets were not one all along",
    );
  });

  it('says nothing of a fleet that went as agreed', () => {
    expect(fleetNotes([result([worker({}), worker({ share: 1, startLagMs: 100 })])])).toEqual([]);
  });
});
