import type { RunPointsFn } from '../../explore/run-points.js';
import { stopCause, stopExit, type Io, type StopCause } from '../io.js';

/** What a stopped sweep or tune ends with: its cause, and the points done before it. */
export interface PointsStopped {
  cause: StopCause;
  done: number;
}

/**
 * A sweep's or a tune's points, stoppable: SIGINT, SIGTERM or a reader that left (`io.onStop`)
 * aborts the points (none starts after it, worker threads stop), and the command ends at once
 * with one line and the signal's exit code (`stoppedExit`). Nothing is written: a grid or a
 * search cut short answers nothing it was asked.
 */
export class PointsStop {
  private readonly controller = new AbortController();
  private readonly stopped: Promise<StopCause>;
  private readonly off: (() => void) | undefined;
  /** Points finished so far, over every batch. */
  done = 0;

  constructor(io: Io) {
    let heard: (cause: StopCause) => void = () => {};
    this.stopped = new Promise((resolve) => (heard = resolve));
    this.off = io.onStop?.((signal) => {
      const cause = stopCause(signal);
      this.controller.abort(new Error(`stopped by ${cause}`));
      heard(cause);
    });
  }

  /** `run` that stops on the signal and counts the points it finished. */
  wrap(run: RunPointsFn): RunPointsFn {
    return (job, points, opts) => {
      let seen = 0;
      return run(job, points, {
        ...opts,
        signal: this.controller.signal,
        onDone: (done, total) => {
          this.done += done - seen;
          seen = done;
          opts.onDone?.(done, total);
        },
      });
    };
  }

  /** `work`'s value, or the stop that came first (the work's later rejection is then nobody's). */
  async race<T>(work: Promise<T>): Promise<{ value: T } | { stopped: PointsStopped }> {
    work.catch(() => {});
    try {
      return await Promise.race([
        work.then((value) => ({ value })),
        this.stopped.then((cause) => ({ stopped: { cause, done: this.done } })),
      ]);
    } finally {
      this.off?.();
    }
  }
}

/** The one line of a stopped sweep or tune, and its exit code (130, 141, 143). */
export function stoppedExit(io: Io, command: string, s: PointsStopped, total?: number): number {
  const points = total === undefined ? `${s.done}` : `${s.done} of ${total}`;
  io.stderr(
    `stormlab: ${command} stopped by ${s.cause} after ${points} point${s.done === 1 && total === undefined ? '' : 's'}; nothing written\n`,
  );
  return stopExit(s.cause);
}
