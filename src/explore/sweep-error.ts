import { StormlabError } from '../engine/errors.js';

/**
 * What is wrong with a sweep's `--param` flags, one line per problem, each naming the flag
 * (`--param engine.throttle.k: 2 is given twice`). The CLI prints each line and exits 2.
 */
export class SweepError extends StormlabError {
  readonly problems: string[];

  constructor(problems: readonly string[]) {
    super('ERR_STORMLAB_SWEEP', problems.join('\n'));
    this.problems = [...problems];
  }
}
