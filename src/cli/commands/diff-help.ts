import { DIFF_FLOORS } from '../../gate/diff-metrics.js';
import { commandExitHelp } from '../command-exits.js';

/** What `stormlab diff --help` adds below the options: the metrics, names and floors. */
export const DIFF_HELP = `
Compared per variant (matched by name): amplification, goodput, successRate, roots.p99,
layers.<name>.p99, wastedTokens (upstream), recovery and, with tools, tools.<name>.duplicates and
roots.degraded share, with stage budgets roots.partial share. A metric fails when it got worse
than the base by more than the tolerance, a share of the base figure, and by more than its
floor (so a change from 0 is judged too, and noise on tiny figures is not):
  amplification ${DIFF_FLOORS.amplification}×, goodput ${DIFF_FLOORS.goodput}/s, successRate ${DIFF_FLOORS.successRate * 100} %, p99 ${DIFF_FLOORS.p99} ms, wastedTokens ${DIFF_FLOORS.wastedTokens}, recovery ${DIFF_FLOORS.recovery / 1000} s,
  duplicates ${DIFF_FLOORS.duplicates}, degraded and partial shares ${DIFF_FLOORS.degraded * 100} %.
Per-metric tolerances take a name above, or a family: p99 (every p99), e.g.
  stormlab diff base.json new.json --tolerance 5% --tolerance amplification=2% --tolerance p99=10%
${commandExitHelp('diff', { ok: 'no regression', failed: 'a regression (or a variant of the base missing)' })}
`;
