import type { ResultFile, RunResult } from '../run/metrics/result.js';
import { round6 } from '../run/metrics/round.js';
import type { Check } from '../report/check.js';
import { formatFigure } from '../report/format.js';
import { holds, type Expectation } from './expectation.js';

/**
 * Judges each expectation on each variant it names (every variant of the file when it names
 * none): one check per expectation and variant. Figures are rounded as the result JSON
 * rounds them, so judging a run and judging its saved JSON agree. A run that never recovered
 * has a recovery time of "never" (infinite); a figure the run does not have (a live-only one
 * in a simulated run, a variant that was not run) is a skipped check, not a pass. A run no
 * root task arrived in measured nothing: every expectation on it fails, saying so (its figures
 * read 0, which would pass any upper bound).
 */
export function evaluateExpectations(expectations: readonly Expectation[], file: ResultFile): Check[] {
  const checks: Check[] = [];
  for (const e of expectations) {
    const runs = e.variant === undefined ? file.variants : file.variants.filter((v) => v.name === e.variant);
    if (runs.length === 0) checks.push(notRun(e));
    for (const run of runs) checks.push(judge(e, run));
  }
  return checks;
}

function judge(e: Expectation, run: RunResult): Check {
  const base = { name: e.text, group: run.name, expected: `${e.op} ${e.thresholdText}` };
  const raw = e.metric.value(run);
  if (raw === null && e.metric.name !== 'recoveryMs') {
    return {
      ...base,
      status: 'skip',
      actual: '',
      message: `${e.metric.name} is not in this run's result${e.metric.name.startsWith('live.') ? ' (live runs only)' : ''}`,
    };
  }
  if (run.roots.offered === 0)
    return {
      ...base,
      status: 'fail',
      actual: '',
      message: 'no root task arrived, so nothing was measured: it cannot hold',
    };
  const actual = raw === null ? Infinity : round6(raw);
  return {
    ...base,
    status: holds(actual, e.op, e.threshold) ? 'pass' : 'fail',
    actual: formatFigure(e.metric.unit, actual),
  };
}

function notRun(e: Expectation): Check {
  return {
    name: e.text,
    group: e.variant!,
    status: 'skip',
    actual: '',
    expected: `${e.op} ${e.thresholdText}`,
    message: `variant ${e.variant} was not run (compare runs every variant; run takes --variant ${e.variant})`,
  };
}
