import type { ResultFile } from '../../run/metrics/result.js';
import type { StopCause } from '../io.js';

/** A result file, and what stopped its run early (undefined when it ran to its end). */
export interface Executed {
  file: ResultFile;
  stop: StopCause | undefined;
}

/** The result of a run stopped by `stop` is marked partial. */
export function partialIf(file: ResultFile, stop: StopCause | undefined): Executed {
  return { file: stop === undefined ? file : { ...file, partial: true }, stop };
}
