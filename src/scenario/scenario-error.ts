import { StormlabError } from '../engine/errors.js';

/**
 * A scenario that cannot be used, with every problem found, one line each, each starting with
 * where it is: `layers[1].fanout: expected a positive integer, got -2`. The CLI prints the
 * message as is (no stack) and exits with 2.
 */
export class ScenarioError extends StormlabError {
  readonly problems: string[];
  readonly source: string;

  constructor(source: string, problems: readonly string[]) {
    const n = problems.length;
    super(
      'ERR_STORMLAB_SCENARIO',
      `${source}: ${n} ${n === 1 ? 'problem' : 'problems'}${shownProblems(problems)
        .map((p) => `\n  ${p}`)
        .join('')}`,
    );
    this.source = source;
    this.problems = [...problems];
  }
}

/** The most problems said of one input: a file with 40,000 unknown keys gets 20 lines and a count, not 40,000 lines. */
export const MAX_PROBLEMS_SHOWN = 20;

/** The first `MAX_PROBLEMS_SHOWN` problems, then `and N more problems` when there are more. */
export function shownProblems(problems: readonly string[]): string[] {
  if (problems.length <= MAX_PROBLEMS_SHOWN) return [...problems];
  const more = problems.length - MAX_PROBLEMS_SHOWN;
  return [...problems.slice(0, MAX_PROBLEMS_SHOWN), `and ${more.toLocaleString('en-US')} more problems`];
}
