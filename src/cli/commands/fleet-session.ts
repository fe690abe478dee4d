import { basename } from 'node:path';
import type { FleetCoordinator } from '../../explore/fleet-coordinator.js';
import type { FleetOutcome, FleetRun } from '../../explore/fleet-run.js';
import { sharedStateOf } from '../../explore/fleet-state.js';
import { SecondHop } from '../../run/live/second-hop.js';
import type { UpstreamHop } from '../../run/metrics/result.js';
import { runSpecOf } from '../../run/run-spec.js';
import { formatDuration } from '../../scenario/duration.js';
import type { Scenario } from '../../scenario/scenario.js';
import type { Io, StopCause } from '../io.js';
import type { Steppable } from '../playback.js';
import type { LiveSettings } from './live-session.js';

/** One variant of a fleet run: its run on the fleet, hop 2 when a gateway is under test, and what came back. */
export interface FleetVariant {
  name: string;
  scenario: Scenario;
  fleet: FleetRun;
  hop2?: SecondHop;
  hop?: UpstreamHop;
  outcome?: FleetOutcome;
  over: boolean;
}

/**
 * `LiveSession` for a fleet: the variants one after the other, each split over `workers`
 * `stormlab worker`s (`FleetRun`). Only this process, the coordinator, touches hop 2: it
 * installs the faults just before the agreed start and settles and reads hop 2 after every
 * worker has reported (or was lost), then restores. A first stop tells every worker to stop
 * and still lets hop 2 settle; a second, SIGTERM or SIGPIPE reads it at once.
 */
export class FleetSession {
  readonly variants: FleetVariant[];
  readonly done: Promise<void>;
  error: unknown = undefined;
  private stopped = false;
  private readonly skip = new AbortController();

  constructor(
    private readonly io: Io,
    coordinator: FleetCoordinator,
    runs: Array<{ name: string; scenario: Scenario }>,
    private readonly settings: LiveSettings & { target: string },
    workers: number,
    waitMs: number,
  ) {
    this.variants = runs.map((r) => {
      const spec = runSpecOf(r.scenario, r.name);
      const fleet = coordinator.variant(
        spec,
        {
          name: r.name,
          scenario: { file: `${basename(r.scenario.name)}.json`, text: JSON.stringify(r.scenario.document) },
          target: settings.target,
          headers: settings.headers,
          connections: settings.connections ?? r.scenario.live.connections,
          sharedState: sharedStateOf(spec).store === 'redis',
          waitMs,
        },
        workers,
      );
      return { name: r.name, scenario: r.scenario, fleet, over: false };
    });
    this.done = this.runAll();
  }

  steps(): Array<{ name: string; sim: Steppable }> {
    return this.variants.map((v) => ({
      name: v.name,
      sim: {
        get now() {
          return v.fleet.now;
        },
        get done() {
          return v.over;
        },
        view: (name: string) => {
          const view = { ...v.fleet.view(name), done: v.over };
          const hop2 = v.hop2;
          return hop2 === undefined ? view : { ...view, hops: hop2.view(v.fleet.sent()) };
        },
      },
    }));
  }

  stop(cause: StopCause): void {
    const again = this.stopped;
    this.stopped = true;
    for (const v of this.variants) v.fleet.stop();
    if (again || cause !== 'SIGINT') this.skip.abort();
  }

  get interrupted(): boolean {
    return this.stopped && this.variants.some((v) => !v.fleet.started || v.fleet.interrupted);
  }

  restore(): Promise<unknown> {
    return Promise.all(this.variants.map((v) => v.hop2?.restore()));
  }

  private async runAll(): Promise<void> {
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

  private async runOne(v: FleetVariant): Promise<void> {
    try {
      if (this.settings.upstream !== undefined)
        v.hop2 = await SecondHop.open(this.settings.upstream, this.settings.settle);
      const hop2 = v.hop2;
      v.outcome = await v.fleet.drive(async () => {
        if (hop2 !== undefined) await hop2.begin(v.scenario.upstream.faults, this.skip.signal);
      });
    } catch (err) {
      this.skip.abort();
      throw err;
    } finally {
      if (v.hop2 !== undefined) await this.finishHop(v, v.hop2);
    }
  }

  /** After every worker reported (or was lost): hop 2 settles, is read, and the upstream gets its settings back. */
  private async finishHop(v: FleetVariant, hop2: SecondHop): Promise<void> {
    const { quietMs, timeoutMs } = hop2.options;
    if (this.stopped && !this.skip.signal.aborted && v.fleet.started)
      this.io.stderr(
        `stopping: hop 2 is read once ${hop2.url} has had nothing in flight for ${formatDuration(quietMs)} (at most ${formatDuration(timeoutMs)}); Ctrl-C reads it now\n`,
      );
    const leafCalls = v.outcome?.result.layers.at(-1)?.logicalCalls ?? 0;
    const end = await hop2.finish(v.outcome?.sent ?? 0, leafCalls, this.skip.signal);
    v.hop = end.hop;
    if (end.restoreProblem !== undefined)
      this.io.stderr(`note: --upstream: its own fault phases could not be put back: ${end.restoreProblem}\n`);
  }
}
