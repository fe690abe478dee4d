import type { ResultFile } from '../../run/metrics/result.js';
import type { StopCause } from '../io.js';

/** A result file, and what stopped its run early (undefined when it ran to its end). */
export interface Executed {
  file: ResultFile;
  stop: StopCause | undefined;
  /** Where a stopped run had got to (ms of its timeline). */
  stoppedAtMs?: number;
}

/** The result of a run stopped by `stop` (at `atMs` of its timeline) is marked partial. */
export function partialIf(file: ResultFile, stop: StopCause | undefined, atMs?: number): Executed {
  if (stop === undefined) return { file, stop };
  return { file: { ...file, partial: true }, stop, ...(atMs === undefined ? {} : { stoppedAtMs: atMs }) };
}
