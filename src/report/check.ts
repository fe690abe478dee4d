import type { Check } from '../run/metrics/result.js';

/**
 * A gate's pass/fail lines. The type lives with the result schema (a result file carries the
 * checks judged on it); every renderer here takes a list of them.
 */
export type { Check };

/** Counts of a list of checks, and whether the gate as a whole holds (no failure). */
export function tally(checks: readonly Check[]): { pass: number; fail: number; skip: number; ok: boolean } {
  let pass = 0;
  let fail = 0;
  let skip = 0;
  for (const c of checks) {
    if (c.status === 'pass') pass++;
    else if (c.status === 'fail') fail++;
    else skip++;
  }
  return { pass, fail, skip, ok: fail === 0 };
}
