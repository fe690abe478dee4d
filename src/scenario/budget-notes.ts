import type { Scenario } from './scenario.js';
import { formatDuration } from './duration.js';

/**
 * What a reader of a scenario must know that no check refuses: a stage budget longer than the
 * task's deadline (`stages: {plan: 90s}` under `deadline: 30s`) never binds, since the deadline
 * propagates down the tree and ends the stage's calls first. One line per stage and budget,
 * said once however many of `runs` have it, naming the variants when only some do.
 */
export function budgetNotes(runs: ReadonlyArray<{ name: string; variant?: string; scenario: Scenario }>): string[] {
  const found = new Map<string, { line: string; variants: string[] }>();
  for (const run of runs) {
    const { deadlineMs, stages } = run.scenario.traffic;
    for (const [stage, budgetMs] of Object.entries(stages ?? {})) {
      if (!(budgetMs > deadlineMs)) continue;
      const line = `stages.${stage} is ${formatDuration(budgetMs)}, longer than the deadline (${formatDuration(deadlineMs)}): the deadline ends the stage's calls first, so its budget never binds`;
      const seen = found.get(line) ?? { line, variants: [] };
      seen.variants.push(run.variant ?? run.name);
      found.set(line, seen);
    }
  }
  return [...found.values()].map(({ line, variants }) =>
    variants.length === runs.length || runs.length === 1
      ? line
      : `${line} (variant${variants.length === 1 ? '' : 's'} ${variants.join(', ')})`,
  );
}
