import { describe, expect, it } from 'vitest';
import { MAX_RUN_CALLS, MAX_TREE_CALLS, sizeProblems } from '../../src/scenario/size-problems.js';
import type { LayerConfig } from '../../src/traffic/config.js';
import { meanOf } from '../../src/upstream/distribution.js';

const layer = (fanout: LayerConfig['fanout']): LayerConfig => ({
  name: 'l',
  fanout,
  timeoutMs: Infinity,
  retry: { policy: 'none' },
});
const constant = (rate: number) => ({ type: 'constant' as const, rate });

describe('sizeProblems', () => {
  it('passes the bundled sizes and refuses a tree one past the limit, naming the widest layer', () => {
    expect(sizeProblems(constant(20), 60_000, [layer(1), layer(3), layer(1)])).toEqual([]);
    expect(sizeProblems(constant(1), 1000, [layer(1000), layer(1000), layer(1)])).toEqual([]);
    const [line] = sizeProblems(constant(1), 1000, [layer(10), layer(MAX_TREE_CALLS / 10 + 1), layer(1)]);
    expect(line).toMatch(/^layers\[1\]\.fanout: one root task would make about 1,000,010 logical calls/);
  });

  it('counts the last layer as the leaves: its own fan-out makes no calls', () => {
    expect(sizeProblems(constant(1), 1000, [layer(1), layer(1e9)])).toEqual([]);
  });

  it('estimates a run from the arrival mean: constant, ramp, burst; a closed loop is not estimated', () => {
    const ok = (MAX_RUN_CALLS / 3600) * 0.99; // per second, for one hour of tasks of one call each
    expect(sizeProblems(constant(ok), 3_600_000, [layer(1)])).toEqual([]);
    expect(sizeProblems(constant(ok * 1.02), 3_600_000, [layer(1)])).toHaveLength(1);
    expect(sizeProblems({ type: 'ramp', from: 0, to: ok * 2 }, 3_600_000, [layer(1)])).toEqual([]);
    expect(sizeProblems({ type: 'ramp', from: 0, to: ok * 2.1 }, 3_600_000, [layer(1)])).toHaveLength(1);
    const burst = { type: 'burst' as const, rate: 0, burstRate: ok * 10, everyMs: 10_000, lengthMs: 1000 };
    expect(sizeProblems(burst, 3_600_000, [layer(1)])).toEqual([]);
    expect(sizeProblems({ ...burst, lengthMs: 1100 }, 3_600_000, [layer(1)])).toHaveLength(1);
    expect(sizeProblems({ type: 'closed', users: 1e6, thinkMs: 0 }, 3_600_000_000, [layer(1)])).toEqual([]);
  });

  it('uses the mean of a drawn fan-out', () => {
    expect(meanOf({ dist: 'choice', values: [1, 9], weights: [3, 1] })).toBe(3);
    expect(meanOf({ dist: 'uniform', min: 2, max: 4 })).toBe(3);
    expect(meanOf({ dist: 'lognormal', median: 10, p99: 10 })).toBe(10);
    expect(meanOf({ dist: 'lognormal', median: 10, p99: 100 })).toBeCloseTo(
      10 * Math.exp((Math.log(10) / 2.326347874) ** 2 / 2),
      9,
    );
    const wide = sizeProblems(constant(1), 1000, [layer({ dist: 'exponential', mean: 2e6 }), layer(1)]);
    expect(wide[0]).toMatch(/about 2,000,000 logical calls/);
  });
});
