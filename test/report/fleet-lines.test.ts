import { describe, expect, it } from 'vitest';
import type { LiveWorker, RunResult } from '../../src/run/metrics/result.js';
import { fleetLines } from '../../src/report/fleet-lines.js';

const worker = (o: Partial<LiveWorker>): LiveWorker => ({
  share: 0,
  of: 2,
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

const result = (workers: LiveWorker[], sharedState: NonNullable<RunResult['live']>['sharedState']) =>
  ({ name: 'engine', live: { workers, sharedState } }) as unknown as RunResult;

describe('fleetLines', () => {
  it("each share's worker with its roots, requests, offset and lag; what the engines shared", () => {
    const lines = fleetLines([
      result(
        [
          worker({ offsetMs: -0.04 }),
          worker({ share: 1, worker: null, status: 'lost', plannedRoots: null, users: [1, 3], offsetMs: 1.26 }),
        ],
        { store: 'redis', shared: ['retryBudget', 'limits'], perWorker: ['breakerState'] },
      ),
    ]);
    expect(lines).toEqual([
      'engine: 2 workers, one share each',
      // An offset that rounds to nothing has no sign.
      '  share 1/2 vm:100:0: reported, 40 roots planned, 40 started, 40 requests, clock offset 0.0 ms, start lag 3 ms',
      '  share 2/2 (none): lost, 2 users (1, 3), 40 started, 40 requests, clock offset 1.3 ms, start lag 3 ms',
      "  shared through Redis: retry budget, token buckets; each worker's own: breaker state (open, half-open)",
    ]);
  });

  it('says when no layer runs the engine, and skips results not driven by a fleet', () => {
    expect(fleetLines([result([worker({})], { store: 'none', shared: [], perWorker: [] })]).at(-1)).toBe(
      '  engine state: none (no layer runs the engine)',
    );
    expect(fleetLines([{ name: 'x' } as unknown as RunResult])).toEqual([]);
  });
});
