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
      `${source}: ${n} ${n === 1 ? 'problem' : 'problems'}${problems.map((p) => `\n  ${p}`).join('')}`,
    );
    this.source = source;
    this.problems = [...problems];
  }
}
