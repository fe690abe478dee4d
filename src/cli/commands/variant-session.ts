import type { SecondHop } from '../../run/live/second-hop.js';
import type { UpstreamHop } from '../../run/metrics/result.js';
import type { RunView } from '../../run/run-view.js';
import { formatDuration } from '../../scenario/duration.js';
import type { Scenario } from '../../scenario/scenario.js';
import type { Io, StopCause } from '../io.js';
import type { Steppable } from '../playback.js';
import type { DrivenSession } from './drive-session.js';

/** What every live variant has, in one process or on a fleet: hop 2 when a gateway is under test, and whether it is over. */
export interface SessionVariant {
  name: string;
  scenario: Scenario;
  /** With --upstream: hop 2, behind the gateway, and its figures once read. */
  hop2?: SecondHop;
  hop?: UpstreamHop;
  /** Its run is over, and so is hop 2 (settled, read, the upstream's settings put back). */
  over: boolean;
}

/**
 * What a live run's session does the same in one process (`LiveSession`) and on a fleet
 * (`FleetSession`): the variants one after the other (`runOne` each; a failure stops the
 * session and is kept in `error`), what the dashboard plays (each variant done only once its
 * hop 2 is read too), the stops, and hop 2's end.
 *
 * `stop(cause)` ends the variant in progress and starts no other. A first SIGINT (q, Ctrl-C)
 * still lets hop 2 settle, so its figures stay whole; a second, a SIGTERM, a closed output pipe,
 * or a first SIGINT while hop 2 is already settling reads it at once. Either way the upstream's
 * own settings are put back.
 */
export abstract class VariantSession<V extends SessionVariant> implements DrivenSession {
  /** Settles when the last variant is over; subclasses set it to `this.runAll()` once constructed. */
  abstract readonly done: Promise<void>;
  /** What went wrong, if a run failed (it stops the session; the dashboard then ends). */
  error: unknown = undefined;
  protected stopped = false;
  private settling = false;
  /** Aborted by a hard stop: hop 2 is read without waiting for the upstream to be idle. */
  protected readonly skip = new AbortController();

  constructor(
    protected readonly io: Io,
    readonly variants: V[],
  ) {}

  /** The variant's clock, ms since its start. */
  protected abstract clock(v: V): number;
  /** The variant's view for the dashboard (its `done` is the session's). */
  protected abstract show(v: V, name: string): RunView;
  /** Runs the variant to its end, hop 2 included. */
  protected abstract runOne(v: V): Promise<void>;
  /** Stops every variant's run (a stop's first act). */
  protected abstract stopRuns(): void;

  /** What the dashboard plays: each variant's run, done only once its hop 2 is read too. */
  steps(): Array<{ name: string; sim: Steppable }> {
    return this.variants.map((v) => {
      const session = this;
      return {
        name: v.name,
        sim: {
          get now() {
            return session.clock(v);
          },
          get done() {
            return v.over;
          },
          // Done once hop 2 is read too: until then the dashboard shows it settling.
          view: (name: string) => ({ ...this.show(v, name), done: v.over }),
        },
      };
    });
  }

  stop(cause: StopCause): void {
    const again = this.stopped;
    this.stopped = true;
    this.stopRuns();
    if (again || cause !== 'SIGINT' || this.settling) this.skip.abort();
  }

  /** Puts every upstream behind the gateway back as it was (a crash's last act). */
  restore(): Promise<unknown> {
    return Promise.all(this.variants.map((v) => v.hop2?.restore()));
  }

  protected async runAll(): Promise<void> {
    for (const v of this.variants) {
      if (this.stopped) break;
      try {
        await this.runOne(v);
      } catch (err) {
        this.error ??= err;
        this.stop('SIGINT');
      } finally {
        v.over = true;
      }
    }
  }

  /**
   * Waits for hop 2 to settle (unless skipped), reads it against what the driver sent and the
   * leaf layer's logical calls, and puts the upstream's settings back.
   */
  protected async finishHop(v: V, hop2: SecondHop, ran: { started: boolean; sent: number; leafCalls: number }) {
    this.settling = true;
    try {
      const { quietMs, timeoutMs } = hop2.options;
      if (this.stopped && !this.skip.signal.aborted && ran.started)
        this.io.stderr(
          `stopping: hop 2 is read once ${hop2.url} has had nothing in flight for ${formatDuration(quietMs)} (at most ${formatDuration(timeoutMs)}); Ctrl-C reads it now\n`,
        );
      const end = await hop2.finish(ran.sent, ran.leafCalls, this.skip.signal);
      v.hop = end.hop;
      if (end.restoreProblem !== undefined)
        this.io.stderr(`note: --upstream: its own fault phases could not be put back: ${end.restoreProblem}\n`);
    } finally {
      this.settling = false;
    }
  }
}
