import type { ArrivalConfig, LayerConfig } from '../traffic/config.js';
import { meanOf } from '../upstream/distribution.js';
import { formatDuration } from './duration.js';

/** One root task's call tree, in logical calls: more is a typo (a fan-out of 1e9), not a scenario. */
export const MAX_TREE_CALLS = 1_000_000;
/** A run's logical calls: past this a simulation takes many minutes and gigabytes; split it or shorten it. */
export const MAX_RUN_CALLS = 20_000_000;

/**
 * Scenarios too large to simulate, found before the run instead of by running out of memory
 * or time: one line for a call tree past `MAX_TREE_CALLS` (the product of the layers' mean
 * fan-outs) and one for a run past `MAX_RUN_CALLS` (root tasks the arrival makes in the
 * duration, times the tree). A closed loop's root tasks are bounded by its users, not estimated.
 */
export function sizeProblems(arrival: ArrivalConfig, durationMs: number, layers: readonly LayerConfig[]): string[] {
  const fanouts = layers.slice(0, -1).map((l) => Math.max(1, Math.ceil(meanOf(l.fanout))));
  const perRoot = fanouts.reduce((a, b) => a * b, 1);
  if (perRoot > MAX_TREE_CALLS) {
    const widest = fanouts.indexOf(Math.max(...fanouts));
    return [
      `layers[${widest}].fanout: one root task would make about ${count(perRoot)} logical calls (fan-out ${fanouts.join(' × ')}); at most ${count(MAX_TREE_CALLS)}`,
    ];
  }
  const rate = meanRate(arrival);
  if (rate === undefined) return [];
  const total = ((rate * durationMs) / 1000) * perRoot;
  if (total <= MAX_RUN_CALLS) return [];
  return [
    `duration: ${formatDuration(durationMs)} at ${count(rate)} root tasks/s would make about ${count(total)} logical calls (${count(perRoot)} per task); a run simulates at most ${count(MAX_RUN_CALLS)}: shorten it or lower the arrival rate`,
  ];
}

/** Root tasks per second on average; undefined for a closed loop. */
function meanRate(a: ArrivalConfig): number | undefined {
  switch (a.type) {
    case 'constant':
    case 'poisson':
      return a.rate;
    case 'ramp':
      return (a.from + a.to) / 2;
    case 'burst':
      return (a.rate * (a.everyMs - a.lengthMs) + a.burstRate * a.lengthMs) / a.everyMs;
    case 'closed':
      return undefined;
  }
}

function count(n: number): string {
  return n >= 1e15 ? n.toExponential(1) : n.toLocaleString('en-US', { maximumFractionDigits: n < 10 ? 2 : 0 });
}
